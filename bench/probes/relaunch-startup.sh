#!/usr/bin/env bash
# What making a plain launch safe costs at start-up (docs/scheduler.md, "One process per
# instance"): bench/probes/RelaunchProbe.java, which calls SafeJvm.relaunchIfNeeded and exits,
# timed from outside for each variant in turn, ROUNDS times. Usage:
#   bench/probes/relaunch-startup.sh ROUNDS LABEL=CLASSPATH[=JVM_OPTIONS] ...
# CLASSPATH holds the scheduler-core classes to try (this tree's scheduler-core/target/classes, or
# an older build's jar); JVM_OPTIONS are added to the command line (e.g. SafeJvm's options, for the
# launch that needs no relaunch). Every variant runs with --enable-native-access=ALL-UNNAMED, as
# the service's manifest gives it. Prints each round, then per variant the median and range of
# the wall time in ms. Figures count only as ratios to another variant of the same run.
set -euo pipefail
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
JAVAC=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/javac
rounds=$1; shift
first=${1#*=}; first=${first%%=*}
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
"$JAVAC" -d "$out" -cp "$first" "$(dirname "$0")/RelaunchProbe.java"
declare -A times
for ((r = 1; r <= rounds; r++)); do
  line="round $r:"
  for v in "$@"; do
    label=${v%%=*}; rest=${v#*=}; cp=${rest%%=*}; opts=""
    [[ $rest == *=* ]] && opts=${rest#*=}
    start=$(date +%s%N)
    # shellcheck disable=SC2086 # opts is a list of options
    env -u JDK_JAVA_OPTIONS -u GOSCHED_RELAUNCHED "$JAVA" --enable-native-access=ALL-UNNAMED $opts -cp "$out:$cp" RelaunchProbe
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    times[$label]+="$ms "; line+=" $label $ms ms"
  done
  echo "$line"
done
for v in "$@"; do
  label=${v%%=*}
  sorted=$(tr ' ' '\n' <<<"${times[$label]}" | grep . | sort -n)
  echo "$label: median $(awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}' <<<"$sorted") ms (range $(sed -n '1p;$p' <<<"$sorted" | paste -sd-) ms)"
done
