#!/usr/bin/env bash
# Measures the preemption agent (scheduler-agent): its cost on tight loops (JMH,
# AgentCostBenchmark: instrumented vs plain in one JVM) and its effect on the hog workload
# (AgentHog: ticker lateness, peak threads, preemptions, spare-P hand-offs, hog progress) against
# today's spare-P hand-off, plain and agent runs interleaved. Options: --no-build, --quick.
# The machine is shared: compare the ratios within one invocation, not absolute numbers.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
if [ -z "${JAVA_HOME:-}" ] && [ -d /usr/lib/jvm/temurin-25-jdk-amd64 ]; then
  export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
fi
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"

build=1; quick=0
for a in "$@"; do
  case "$a" in
    --no-build) build=0 ;;
    --quick) quick=1 ;;
    *) echo "usage: bench/agent.sh [--no-build] [--quick]" >&2; exit 2 ;;
  esac
done
if [ "$build" = 1 ]; then
  ./mvnw -B -q -ntp -pl scheduler-agent,scheduler-bench -am -DskipTests package
fi
AGENT=$(ls scheduler-agent/target/scheduler-agent-*.jar | grep -v -e sources -e javadoc | head -1)
BENCH=scheduler-bench/target/benchmarks.jar

echo "== cost on tight loops (JMH AverageTime, ns/op; 1024 iterations per op)"
if [ "$quick" = 1 ]; then jmh=(-wi 2 -i 3 -w 1s -r 1s); else jmh=(); fi
"$JAVA" -jar "$BENCH" AgentCostBenchmark -f 1 "${jmh[@]}" \
  -jvmArgsPrepend "-javaagent:$AGENT=io.gosched.bench.jmh.agentcost.Instrumented" -rf text -rff /tmp/agent-cost.txt >/dev/null
cat /tmp/agent-cost.txt

echo
echo "== hog workload: 2 hogs without safe points + a 1 ms ticker, GOMAXPROCS 2, 2 s per round"
rounds=3; [ "$quick" = 1 ] && rounds=1
cp="$BENCH"
for i in $(seq 1 "$rounds"); do
  "$JAVA" --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -cp "$cp" io.gosched.bench.agent.AgentHog 2 2 2000 1
  "$JAVA" --add-exports java.base/jdk.internal.vm=ALL-UNNAMED "-javaagent:$AGENT=io.gosched.bench.HogState" \
    -cp "$cp" io.gosched.bench.agent.AgentHog 2 2 2000 1
done
echo
echo "== hog workload: 1 hog + a 1 ms ticker, GOMAXPROCS 1"
for i in $(seq 1 "$rounds"); do
  "$JAVA" --add-exports java.base/jdk.internal.vm=ALL-UNNAMED -cp "$cp" io.gosched.bench.agent.AgentHog 1 1 2000 1
  "$JAVA" --add-exports java.base/jdk.internal.vm=ALL-UNNAMED "-javaagent:$AGENT=io.gosched.bench.HogState" \
    -cp "$cp" io.gosched.bench.agent.AgentHog 1 1 2000 1
done
