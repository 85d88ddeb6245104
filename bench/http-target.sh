#!/usr/bin/env bash
# HTTP-target jobs against a plain virtual-thread-per-call runner, in one run (issue 45): N calls
# at once to a local endpoint that answers after D ms. Reports per peer and round: the calls
# answered 200, the wall time from the first call to the last answer, calls per second, the CPU
# seconds its process used meanwhile, and the most platform threads it had (/proc/<pid>/status
# "Threads"), with the 1-minute load average before and after.
#
#   gosched  the service's Boot jar: N jobs {"http": {...}} submitted in batches of 1,000
#            (POST /api/v1/jobs/batch), timed until gosched_jobs_finished_total counts N more in
#            any state (answered 200: those succeeded); every call runs in its job's goroutine,
#            parked while it waits. Calls and jobs time out after 110 s and 120 s
#   vt       bench/probes/VtHttpRunner.java: N virtual threads, each one blocking HttpClient.send
#            (one JVM; a warm-up round of N calls in it first, as the service gets one)
#
# Builds nothing: build the jar with ./mvnw -B -ntp -DskipTests package -pl scheduler-web -am
# Needs curl and python3. Everything it starts listens on 127.0.0.1 and is stopped on exit.
#
#   ./bench/http-target.sh                     # 10,000 calls, 100 ms each, 2 rounds of both peers
#   ./bench/http-target.sh --calls 2000 --delay 100 --rounds 1 --out FILE.md
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

calls=10000
delay=100
rounds=2
heap=2g
out=""
usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --calls) calls="$2"; shift 2 ;;
    --delay) delay="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --heap) heap="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
require_jar
# every call holds a socket at each end while it waits
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
bench_init gosched-http-target

java bench/probes/SlowTarget.java "$delay" >"$work/target.out" 2>"$work/target.err" &
pids+=("$!")
for _ in $(seq 200); do [ -s "$work/target.out" ] && break; sleep 0.1; done
target_port=$(head -1 "$work/target.out")
url="http://127.0.0.1:$target_port/hooks/work"

# the gosched peer: one service, started once, driven once per round
port=$(free_port)
start_service service "$port" \
  --gosched.jobs.http.allowed-targets="http://127.0.0.1:$target_port/hooks/" \
  --gosched.api.admission.max-running-jobs="$calls" --gosched.api.admission.max-queued-jobs=$((calls * 2)) \
  --gosched.api.limits.max-body-bytes=1048576 --gosched.api.retention.max-finished-jobs=$((calls * 2))
svc=$service_pid
await_ready "$port" "$work/service.log"

# one batch body of $1 HTTP jobs
batch_body() {
  python3 - "$1" "$url" <<'PY'
import json, sys
n, url = int(sys.argv[1]), sys.argv[2]
print(json.dumps({"jobs": [{"http": {"url": url, "body": {"i": i}, "timeoutMs": 110000}, "timeoutMs": 120000} for i in range(n)]}))
PY
}
batch_body 1000 > "$work/batch-1000.json"

# jobs the service finished so far, in any state, and of them succeeded: "FINISHED SUCCEEDED"
finished() {
  curl -s "http://127.0.0.1:$port/actuator/prometheus" \
    | awk '/^gosched_jobs_finished_total\{/ { f += $NF; if ($0 ~ /state="succeeded"/) s += $NF } END { printf "%d %d", f, s }'
}

run_gosched() {
  local f0 s0 f1 s1 base peak sent=0 body n code t t0 t1 c0 c1
  read -r f0 s0 <<<"$(finished)"; base=$(threads_of "$svc"); peak=$base
  c0=$(cpu_s "$svc"); t0=$(date +%s.%N)
  while [ "$sent" -lt "$calls" ]; do
    n=$(( calls - sent < 1000 ? calls - sent : 1000 ))
    body="$work/batch-1000.json"
    if [ "$n" -lt 1000 ]; then batch_body "$n" > "$work/batch-last.json"; body="$work/batch-last.json"; fi
    code=$(curl -s -m 60 -o "$work/batch.out" -w '%{http_code}' -X POST "http://127.0.0.1:$port/api/v1/jobs/batch" \
      -H 'Content-Type: application/json' --data-binary @"$body") || code="curl-failed($?)"
    [ "$code" = 202 ] || { echo "batch refused ($code): $(head -c 400 "$work/batch.out" 2>/dev/null)" >&2; exit 1; }
    sent=$((sent + n))
    t=$(threads_of "$svc"); if [ "$t" -gt "$peak" ]; then peak=$t; fi
  done
  # every job ends within its 120 s timeout: wait for all to finish, whatever their state
  for _ in $(seq 15000); do
    t=$(threads_of "$svc"); if [ "$t" -gt "$peak" ]; then peak=$t; fi
    read -r f1 s1 <<<"$(finished)"
    [ $((f1 - f0)) -ge "$calls" ] && break
    sleep 0.02
  done
  t1=$(date +%s.%N); c1=$(cpu_s "$svc")
  python3 -c "n,s,c=$s1-$s0,$t1-$t0,$c1-$c0; print(f'calls=$calls ok={n} seconds={s:.3f} per_s={n/s:.0f} cpu_s={c:.2f} peak_platform_threads=$peak')"
}

run_vt() {
  java -Xmx"$heap" bench/probes/VtHttpRunner.java "$url" "$calls"
}

load_start=$(load1)
echo "HTTP-target jobs vs virtual threads: $calls calls at once, target answers after ${delay} ms, $(nproc) cores, load $load_start" >&2
rows=()
# a warm-up round of the service (JIT, connection set-up paths), not reported
run_gosched >/dev/null
for r in $(seq "$rounds"); do
  for peer in gosched vt; do
    line=$("run_$peer")
    echo "round $r $peer: $line" >&2
    rows+=("| $r | $peer | $(kv "$line" ok) | $(kv "$line" seconds) | $(kv "$line" per_s) | $(kv "$line" cpu_s) | $(kv "$line" peak_platform_threads) |")
  done
done
load_end=$(load1)
{
  echo "## HTTP-target jobs vs a virtual-thread-per-call runner ($(date -u +%Y-%m-%dT%H:%MZ))"
  echo
  echo "$calls calls at once to a local endpoint answering after ${delay} ms; $(nproc) cores; load average $load_start before, $load_end after."
  echo "\`./bench/http-target.sh --calls $calls --delay $delay --rounds $rounds\`"
  echo
  echo "| round | peer | answered 200 | seconds | calls/s | CPU seconds | peak platform threads |"
  echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: |"
  printf '%s\n' "${rows[@]}"
} | tee ${out:+"$out"}
