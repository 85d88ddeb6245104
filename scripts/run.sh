#!/usr/bin/env bash
# Builds (if needed) and runs the gosched service with its embedded defaults on :8080.
# Needs only JDK 25; Maven comes through the wrapper. Extra arguments go to the application,
# e.g. ./scripts/run.sh --server.port=9000 --gosched.runtime.gomaxprocs=4
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -x /usr/lib/jvm/temurin-25-jdk-amd64/bin/java ] && { [ -z "${JAVA_HOME:-}" ] || ! "$JAVA_HOME/bin/java" -version 2>&1 | grep -q '"25'; }; then
  export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
fi
export PATH="${JAVA_HOME:+$JAVA_HOME/bin:}$PATH"
jar=scheduler-web/target/scheduler-web-0.1.0-SNAPSHOT.jar
if [ ! -f "$jar" ] || [ -n "$(find scheduler-core scheduler-service scheduler-api scheduler-cluster gosched-spring-boot-starter scheduler-web -path '*/src/*' -newer "$jar" -print -quit)" ]; then
  # package, not install: the reactor hands scheduler-web its sibling modules' jars, and nothing is
  # written into the user's ~/.m2 (where a SNAPSHOT would shadow other checkouts' builds).
  ./mvnw -B -q -ntp -DskipTests package -pl scheduler-web -am
fi
# The JVM options GoRuntime.start requires (a fresh Thread.currentThread() in goroutine code, see
# docs/scheduler.md); a plain `java -jar` works too: the service relaunches itself with them.
# Compact object headers are not required but recommended: smaller objects and faster channel
# hand-offs (README, "Which JVM options").
exec java -XX:+UnlockDiagnosticVMOptions -XX:DisableIntrinsic=_currentThread -XX:+UseCompactObjectHeaders -jar "$jar" "$@"
