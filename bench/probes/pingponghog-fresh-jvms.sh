#!/usr/bin/env bash
# Runs Go's TestPingPongHog (io.gosched.runtime.PingPongHog, scheduler-core's test classes) as the
# very first code of N fresh JVMs, one after another, and counts the failures: the evidence for
# "the quantum holds from the first run" (a warm JVM never showed the failure; a cold one on a
# loaded machine failed about 1 run in 40). Prints each failing run, the load average before and
# after, and a summary line. Exit status 1 if any run failed.
#
# Usage: bench/probes/pingponghog-fresh-jvms.sh [N=100] [extra JVM options...]
# Needs: ./mvnw -B -ntp -pl scheduler-core test-compile (the classes), JDK 25.
set -euo pipefail
cd "$(dirname "$0")/../.."
n="${1:-100}"
shift || true
JAVA="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
cp=scheduler-core/target/classes:scheduler-core/target/test-classes
[ -f scheduler-core/target/test-classes/io/gosched/runtime/PingPongHog.class ] \
  || { echo "build first: ./mvnw -B -ntp -pl scheduler-core test-compile" >&2; exit 2; }
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
fail=0
for i in $(seq 1 "$n"); do
  out=$("$JAVA" --add-exports java.base/jdk.internal.vm=ALL-UNNAMED \
        -XX:+UnlockDiagnosticVMOptions -XX:DisableIntrinsic=_currentThread "$@" \
        -cp "$cp" io.gosched.runtime.PingPongHog 2>&1) || { fail=$((fail + 1)); echo "run $i: $out"; }
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "RESULT runs=$n failed=$fail"
[ "$fail" = 0 ]
