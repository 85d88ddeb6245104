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
#
# CEILING=1 adds, in every round after the jars, bench/probes/WebFluxCeiling.java: bare WebFlux on
# Reactor Netty that decodes the same JSON and answers 202, run on the libraries of the LAST jar
# given (the newest build, so the ceiling is the stack that build ships) with the same JVM options.
# It is warmed and measured on the job-submission load only (same WARMUP, DURATION, CONNECTIONS and
# wrk script), tagged jar=ceiling, and at the end each jar's job_submissions rps is printed as a
# ratio to the ceiling's of the same round: what the service's layers above WebFlux leave of it.
# Needs wrk and curl (and unzip with CEILING=1). Loopback only; every server it starts is stopped, also on Ctrl-C or an error.
set -euo pipefail
cd "$(dirname "$0")/.."

export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
export PATH="$JAVA_HOME/bin:$PATH"

[ $# -ge 2 ] || { echo "usage: $0 OLD.jar NEW.jar [MORE.jar ...]" >&2; exit 2; }
for jar in "$@"; do [ -f "$jar" ] || { echo "no such jar: $jar" >&2; exit 2; }; done
[ -z "${CEILING:-}" ] || command -v unzip >/dev/null || { echo "CEILING=1 needs unzip: apt-get install -y unzip" >&2; exit 2; }
rounds="${ROUNDS:-2}"
port="${PORT:-18080}"
base="http://127.0.0.1:$port"
logs="$(mktemp -d)"
pid=""
# The service re-executes itself in place with SafeJvm's options when started without them;
# starting it with them spares that second JVM start-up.
jvm_opts=(-XX:+UnlockDiagnosticVMOptions -XX:DisableIntrinsic=_currentThread)

threads="${THREADS:-2}"
connections="${CONNECTIONS:-16}"

stop() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=""; fi
}
trap 'stop; rm -rf "$logs"' EXIT INT TERM

if curl -s -o /dev/null "$base/actuator/health"; then
  echo "something already answers on $base: stop it or set PORT" >&2; exit 2
fi

if [ -n "${CEILING:-}" ]; then
  # The probe runs on a Boot jar's own libraries: same Spring, Reactor Netty, Netty and Jackson.
  ceiling_lib="$logs/ceiling-lib"
  mkdir "$ceiling_lib"
  unzip -q -j "${@: -1}" 'BOOT-INF/lib/*.jar' -d "$ceiling_lib"
fi

# Starts "$@" in the background as the one server under test, and waits for its health.
serve() {
  local name=$1; shift
  "$@" >"$logs/$name.log" 2>&1 &
  pid=$!
  for _ in $(seq 120); do curl -s -o /dev/null "$base/actuator/health" && break; sleep 1; done
  curl -s -o /dev/null "$base/actuator/health" || { echo "$name did not start:"; tail -20 "$logs/$name.log"; exit 1; }
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$rounds"); do
  for jar in "$@"; do
    name="$(basename "$jar")"
    serve "$name" java "${jvm_opts[@]}" -jar "$jar" --server.port="$port"
    DURATION="${WARMUP:-40s}" CONNECTIONS="$connections" deploy/loadtest/wrk-bench.sh "$base" >/dev/null 2>&1
    DURATION="${DURATION:-15s}" CONNECTIONS="$connections" deploy/loadtest/wrk-bench.sh "$base" 2>&1 \
      | grep RESULT | sed "s|^|round=$round jar=$name |" | tee -a "$logs/results"
    stop
  done
  if [ -n "${CEILING:-}" ]; then
    serve ceiling java "${jvm_opts[@]}" --enable-native-access=ALL-UNNAMED -cp "$ceiling_lib/*" \
      bench/probes/WebFluxCeiling.java "$port"
    # wrk-bench.sh's first pass, alone: the ceiling has no channels to warm or measure.
    submit=(wrk -t"$threads" -c"$connections" --latency -s deploy/loadtest/wrk/submit-job.lua "$base")
    "${submit[@]}" -d"${WARMUP:-40s}" >/dev/null 2>&1
    "${submit[@]}" -d"${DURATION:-15s}" 2>&1 | grep RESULT | sed "s|^|round=$round jar=ceiling |" | tee -a "$logs/results"
    stop
  fi
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

if [ -n "${CEILING:-}" ]; then
  # Each jar's submissions against the ceiling of its own round: rounds minutes apart on a shared
  # machine see different loads, so only a ratio within a round means anything.
  awk '/name=job_submissions / {
         split($1, r, "="); split($2, j, "="); match($0, / rps=[0-9.]+/); rps = substr($0, RSTART + 5, RLENGTH - 5)
         if (j[2] == "ceiling") ceiling[r[2]] = rps; else { n++; round[n] = r[2]; jar[n] = j[2]; got[n] = rps }
       }
       END { for (i = 1; i <= n; i++) if (ceiling[round[i]] > 0)
               printf "RATIO round=%s jar=%s job_submissions=%.2fx of ceiling (%s / %s rps)\n",
                      round[i], jar[i], got[i] / ceiling[round[i]], got[i], ceiling[round[i]] }' "$logs/results"
fi
