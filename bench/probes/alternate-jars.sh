#!/bin/bash
# Probe (not part of the build): an A/B of two builds in alternating processes, for effects of a
# few percent that compare.sh's interleaved peers blur. Runs bench/probes/HandOffRounds.java from
# jar A, then from jar B, PAIRS times; prints per pair the median of each process's last 4
# rounds and A/B (above 1: B is faster).
#   bench/probes/alternate-jars.sh /tmp/before.jar scheduler-bench/target/benchmarks.jar 8 pingpong 1 7
set -euo pipefail
A=$1; B=$2; PAIRS=$3; shift 3
. "$(dirname "$0")/handoff-median.sh"
for i in $(seq "$PAIRS"); do
  a=$(handoff_median "$A" "" "$@"); b=$(handoff_median "$B" "" "$@")
  echo "pair $i: A $a B $b A/B $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f", a/b}')"
done
