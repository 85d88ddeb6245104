#!/usr/bin/env bash
# Bulk intake: jobs accepted per second through POST /api/v1/jobs/batch (BATCH jobs per request)
# against one POST /api/v1/jobs per job, on the in-memory single node and on one cluster node over
# a nats-server, in one run: per configuration the two ways alternate for ROUNDS rounds after a
# warm-up of each, and the batch/single ratio is printed per configuration (figures count only as
# that ratio: the machine is shared). Also prints the 1-minute load average before and after.
#
#   ./bench/batch-intake.sh                              # batch 100, warm-up 30 s, 2 rounds x 10 s per way
#   BATCH=500 WARMUP=40 DURATION=15 ROUNDS=3 CONNECTIONS=8 CONFIGS=memory,cluster ./bench/batch-intake.sh
#
# The job is the smallest (one yield): what is measured is the intake's cost per job. The nodes
# run with max-queued-jobs at 10,000,000 so that intake, not the queue's limit, is what saturates
# (jobs run as they come; a refused request is counted apart and is not in the rate).
# Builds nothing: the jar is scheduler-web's Boot jar (./mvnw -B -ntp -DskipTests package -pl scheduler-web -am).
# Needs wrk, curl, python3 and nats-server. Loopback only, free ports; everything it starts is
# stopped on exit, also on Ctrl-C or an error.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

batch="${BATCH:-100}"
warmup="${WARMUP:-30}"
duration="${DURATION:-10}"
rounds="${ROUNDS:-2}"
connections="${CONNECTIONS:-8}"
threads="${THREADS:-2}"
configs="${CONFIGS:-memory,cluster}"
heap="${HEAP:-768m}"
job='{"workload":{"steps":[{"op":"yield"}]}}'
batch_body=$(python3 -c "import sys; j=sys.argv[1]; n=int(sys.argv[2]); print('{\"jobs\":[' + ','.join([j]*n) + ']}')" "$job" "$batch")

require_jar
for tool in wrk curl python3; do
  command -v "$tool" >/dev/null || { echo "$tool missing (Debian: apt-get install -y $tool)" >&2; exit 1; }
done
bench_init gosched-batch-bench

start_node() {
  port=$(free_port)
  start_service node "$port" --gosched.api.admission.max-queued-jobs=10000000 "$@"
  node_pid=$service_pid
  await_ready "$port" "$work/node.log"
}

# drive WAY SECONDS: wrk posting one job (single) or one batch (batch) per request; prints jobs accepted/s
drive() {
  local way=$1 secs=$2 url body per
  if [ "$way" = single ]; then url="/api/v1/jobs"; body="$job"; per=1; else url="/api/v1/jobs/batch"; body="$batch_body"; per="$batch"; fi
  GOSCHED_BODY="$body" GOSCHED_PER_REQUEST="$per" wrk -t"$threads" -c"$connections" -d"${secs}s" --timeout 20s \
    -s bench/batch-intake.lua "http://127.0.0.1:$port$url" > "$work/wrk.out" 2>&1 || true
  local r; r=$(grep '^RESULT' "$work/wrk.out") || { echo "wrk failed:" >&2; cat "$work/wrk.out" >&2; exit 1; }
  awk -v a="$(kv "$r" jobs_accepted)" -v d="$(kv "$r" duration_us)" -v f="$(kv "$r" refused)" -v o="$(kv "$r" other)" \
    'BEGIN { printf "%.0f %d %d", a / (d / 1e6), f, o }'
}

echo "batch intake: $(nproc) cores, batch of $batch, wrk -t$threads -c$connections, warm-up ${warmup} s per way, $rounds rounds x ${duration} s per way"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
rows=()
for cfg in ${configs//,/ }; do
  nats_pid=""
  if [ "$cfg" = memory ]; then
    start_node
  else
    [ "$cfg" = memory ] || require_nats
    start_nats cluster
    start_node --gosched.cluster.nats.url="nats://127.0.0.1:$nats_port" --gosched.cluster.node-id=bench-1
  fi
  drive single "$warmup" >/dev/null
  drive batch "$warmup" >/dev/null
  single_sum=0; batch_sum=0
  for round in $(seq "$rounds"); do
    read -r s sr so <<<"$(drive single "$duration")"
    read -r b br bo <<<"$(drive batch "$duration")"
    echo "[$cfg] round $round: single $s jobs/s (refused $sr, other $so), batch $b jobs/s (refused $br, other $bo), load $(load1)"
    single_sum=$((single_sum + s)); batch_sum=$((batch_sum + b))
  done
  ratio=$(awk -v b="$batch_sum" -v s="$single_sum" 'BEGIN { printf "%.1f", b / s }')
  rows+=("| $cfg | $((single_sum / rounds)) | $((batch_sum / rounds)) | ${ratio}x |")
  stop_pids "$node_pid" $nats_pid
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| configuration | one POST /jobs per job (jobs/s) | POST /jobs/batch of $batch (jobs/s) | batch / single |"
echo "| --- | ---: | ---: | ---: |"
printf '%s\n' "${rows[@]}"
