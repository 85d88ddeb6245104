#!/usr/bin/env bash
# Start-up of the service to its first healthy answer, for ways of launching it side by side
# (docs/scheduler.md, "One process per instance"). Usage:
#   bench/probes/startup-to-health.sh ROUNDS LABEL=JAR[=JDK_JAVA_OPTIONS] ...
# Each round starts every variant once, in turn, as `java -jar JAR` on a free loopback port (with
# JDK_JAVA_OPTIONS set only when given), polls /actuator/health every 20 ms, and records the
# milliseconds from the start to the first 200 and the resident memory of every process of that
# run (found by its command line). Then SIGKILLs them all. Prints each round, then per variant the
# median and the range. Figures count only as ratios to another variant of the same run.
set -euo pipefail
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
rounds=$1; shift
declare -A times rss
port=$((20000 + RANDOM % 20000))
for ((r = 1; r <= rounds; r++)); do
  for v in "$@"; do
    label=${v%%=*}; rest=${v#*=}; jar=${rest%%=*}; opts=""
    [[ $rest == *=* ]] && opts=${rest#*=}
    port=$((port + 1)); run="--probe.run=$label-$r-$port"
    start=$(date +%s%N)
    if [[ -n $opts ]]; then
      JDK_JAVA_OPTIONS=$opts "$JAVA" -jar "$jar" --server.port=$port --server.address=127.0.0.1 "$run" >/dev/null 2>&1 &
    else
      env -u JDK_JAVA_OPTIONS "$JAVA" -jar "$jar" --server.port=$port --server.address=127.0.0.1 "$run" >/dev/null 2>&1 &
    fi
    pid=$!
    for ((i = 0; i < 9000; i++)); do # 3 minutes at most
      curl -sf -o /dev/null "http://127.0.0.1:$port/actuator/health" && break
      sleep 0.02
    done
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    pids=$(pgrep -f -- "$run" || true)
    kb=0; for p in $pids; do kb=$((kb + $(awk '/VmRSS/ {print $2}' /proc/$p/status 2>/dev/null || echo 0))); done
    n=$(echo $pids | wc -w)
    echo "round $r $label: ${ms} ms to healthy, $n process(es), $((kb / 1024)) MiB resident"
    times[$label]+="$ms "; rss[$label]+="$((kb / 1024)) "
    kill -9 $pids "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    sleep 1
  done
done
for v in "$@"; do
  label=${v%%=*}
  echo "$label: median $(tr ' ' '\n' <<<"${times[$label]}" | grep . | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}') ms" \
    "(range $(tr ' ' '\n' <<<"${times[$label]}" | grep . | sort -n | sed -n '1p;$p' | paste -sd-) ms)," \
    "resident median $(tr ' ' '\n' <<<"${rss[$label]}" | grep . | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}') MiB"
done
