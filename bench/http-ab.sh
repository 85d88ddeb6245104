#!/usr/bin/env bash
# HTTP throughput of two or more builds of the service in one run (A/B): each jar in turn, rounds
# alternated, each server warmed with deploy/loadtest/wrk-bench.sh at WARMUP per load and then
# measured by one more pass at DURATION per load. Prints wrk-bench's RESULT lines tagged with the
# round and the jar, and the 1-minute load average before and after.
#
#   ./bench/http-ab.sh OLD.jar NEW.jar [MORE.jar ...]
#   ROUNDS=3 WARMUP=40s DURATION=15s CONNECTIONS=16 PORT=18080 ./bench/http-ab.sh a.jar b.jar
#
# The warm-up is long on purpose: on two shared cores the JIT compiles the HTTP path for over a
# minute, and a 10 s warm-up measured the compiler (bench/results/NOTES.md, "HTTP throughput").
# Needs wrk and curl. Loopback only; every server it starts is stopped, also on Ctrl-C or an error.
set -euo pipefail
cd "$(dirname "$0")/.."

export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
export PATH="$JAVA_HOME/bin:$PATH"

[ $# -ge 2 ] || { echo "usage: $0 OLD.jar NEW.jar [MORE.jar ...]" >&2; exit 2; }
for jar in "$@"; do [ -f "$jar" ] || { echo "no such jar: $jar" >&2; exit 2; }; done
rounds="${ROUNDS:-2}"
port="${PORT:-18080}"
base="http://127.0.0.1:$port"
logs="$(mktemp -d)"
pid=""
# The service re-executes itself in place with SafeJvm's options when started without them;
# starting it with them spares that second JVM start-up.
jvm_opts=(-XX:+UnlockDiagnosticVMOptions -XX:DisableIntrinsic=_currentThread)

stop() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=""; fi
}
trap 'stop; rm -rf "$logs"' EXIT INT TERM

if curl -s -o /dev/null "$base/actuator/health"; then
  echo "something already answers on $base: stop it or set PORT" >&2; exit 2
fi

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$rounds"); do
  for jar in "$@"; do
    name="$(basename "$jar")"
    java "${jvm_opts[@]}" -jar "$jar" --server.port="$port" >"$logs/$name.log" 2>&1 &
    pid=$!
    for _ in $(seq 120); do curl -s -o /dev/null "$base/actuator/health" && break; sleep 1; done
    curl -s -o /dev/null "$base/actuator/health" || { echo "$name did not start:"; tail -20 "$logs/$name.log"; exit 1; }
    DURATION="${WARMUP:-40s}" CONNECTIONS="${CONNECTIONS:-16}" deploy/loadtest/wrk-bench.sh "$base" >/dev/null 2>&1
    DURATION="${DURATION:-15s}" CONNECTIONS="${CONNECTIONS:-16}" deploy/loadtest/wrk-bench.sh "$base" 2>&1 \
      | grep RESULT | sed "s|^|round=$round jar=$name |"
    stop
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
