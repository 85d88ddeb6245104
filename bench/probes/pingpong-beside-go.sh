#!/bin/bash
# Probe (not part of the build): the ping-pong aim's ratio to Go, measured the only way this VM
# allows (its vCPUs change speed for tens of seconds at a time): Go's bench-go and gosched's
# HandOffRounds in alternating processes, batch after batch, so each pair sees the same minute.
# Per batch: Go's median over its last 4 of 6 runs, then for each JVM variant (a quoted option
# string; "" is the default collector) the median of its process's last 4 of 8 rounds and the
# ratio to Go. Needs bench/go/bench-go and scheduler-bench/target/benchmarks.jar (compare.sh
# builds both).
#   bench/probes/pingpong-beside-go.sh 8 1 "" "-XX:+UseParallelGC"
set -euo pipefail
BATCHES=$1; PROCS=$2; shift 2
VARIANTS=("$@"); [ ${#VARIANTS[@]} -gt 0 ] || VARIANTS=("")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
median4() { sort -n | awk '{v[NR]=$1} END {print (v[2]+v[3])/2}'; }
for b in $(seq "$BATCHES"); do
  go=$( (for i in 1 2 3 4 5 6; do echo "RUN pingpong 2000000 0"; done; echo QUIT) \
    | GOMAXPROCS=$PROCS "$ROOT/bench/go/bench-go" | grep '^OK' | tail -4 \
    | sed 's/.*ns_op=\([0-9.]*\).*/\1/' | median4)
  line="batch $b (load $(cut -d' ' -f1 /proc/loadavg)): go $go"
  for v in "${VARIANTS[@]}"; do
    # shellcheck disable=SC2086 # a variant is a list of options
    g=$("$JAVA" $v -XX:+UnlockDiagnosticVMOptions -XX:DisableIntrinsic=_currentThread \
      -XX:+UseCompactObjectHeaders --add-exports java.base/jdk.internal.vm=ALL-UNNAMED \
      -Xms3g -Xmx3g -XX:+AlwaysPreTouch -cp "$ROOT/scheduler-bench/target/benchmarks.jar" \
      "$ROOT/bench/probes/HandOffRounds.java" pingpong "$PROCS" 8 | tail -4 | awk '{print $3}' | median4)
    line="$line | ${v:-default} $g ($(awk -v g="$g" -v o="$go" 'BEGIN {printf "%.2f", g/o}')x Go)"
  done
  echo "$line"
done
