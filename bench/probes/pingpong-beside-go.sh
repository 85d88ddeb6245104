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
. "$ROOT/bench/probes/handoff-median.sh"
for b in $(seq "$BATCHES"); do
  go=$( (for i in 1 2 3 4 5 6; do echo "RUN pingpong 2000000 0"; done; echo QUIT) \
    | GOMAXPROCS=$PROCS "$ROOT/bench/go/bench-go" | grep '^OK' | tail -4 \
    | sed 's/.*ns_op=\([0-9.]*\).*/\1/' | median4)
  line="batch $b (load $(cut -d' ' -f1 /proc/loadavg)): go $go"
  for v in "${VARIANTS[@]}"; do
    g=$(handoff_median "$ROOT/scheduler-bench/target/benchmarks.jar" "$v" pingpong "$PROCS" 8)
    line="$line | ${v:-default} $g ($(awk -v g="$g" -v o="$go" 'BEGIN {printf "%.2f", g/o}')x Go)"
  done
  echo "$line"
done
