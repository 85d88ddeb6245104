#!/bin/bash
# Probe (not part of the build): an A/B of two builds in alternating processes, for effects of a
# few percent that compare.sh's interleaved peers blur. Runs bench/probes/HandOffRounds.java from
# jar A, then from jar B, PAIRS times; prints per pair the median of each process's last 4
# rounds and A/B (above 1: B is faster).
#   bench/probes/alternate-jars.sh /tmp/before.jar scheduler-bench/target/benchmarks.jar 8 pingpong 1 7
set -euo pipefail
A=$1; B=$2; PAIRS=$3; shift 3
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
PROBE=$(dirname "$0")/HandOffRounds.java
run() {
  "$JAVA" -XX:+UnlockDiagnosticVMOptions -XX:DisableIntrinsic=_currentThread -XX:+UseCompactObjectHeaders \
    --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -Xms3g -Xmx3g -XX:+AlwaysPreTouch \
    -cp "$1" "$PROBE" "${@:2}" | tail -4 | awk '{print $3}' | sort -n | awk '{v[NR]=$1} END {print (v[2]+v[3])/2}'
}
for i in $(seq "$PAIRS"); do
  a=$(run "$A" "$@"); b=$(run "$B" "$@")
  echo "pair $i: A $a B $b A/B $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", a/b}')"
done
