#!/usr/bin/env bash
# Job throughput of cluster mode over loopback: the in-memory single node and 1, 2 and 3 cluster
# nodes on one nats-server, in one run, driven by wrk with one fixed short job (issue 12, item 11).
#
# Reports per configuration: submissions/s (202), refusals/s (429/503), completions/s (jobs that
# succeeded during the window, summed over the nodes' gosched_jobs_finished_total), the p50/p99
# latency of a submission, the CPU each node and nats-server used during the window (cores, from
# /proc/<pid>/stat: utime + stime) and the 1-minute load average before and after. Then, per
# configuration, the latency from submission to start (p50/p99, from the jobs' own records) with
# submissions offered at a fixed rate, half the completions/s just measured (wrk paced by
# bench/start-latency.lua, the records read afterwards by bench/probes/StartLatency.java;
# --no-latency leaves it out).
#
# Builds nothing. The jar it runs is scheduler-web's Boot jar; build it with
#   ./mvnw -B -ntp -DskipTests package -pl scheduler-web -am
# Needs nats-server and wrk (Debian: apt-get install -y nats-server wrk), curl, python3.
#
#   ./bench/cluster.sh                         # warm-up 45 s + 20 s measured per configuration (~7 min)
#   ./bench/cluster.sh --duration 30 --warmup 60 --connections 24 --configs memory,1,2,3 --out FILE.md
#   ./bench/cluster.sh --job '{"workload":{"steps":[{"op":"compute","us":200}]}}'   # another job body
#   ./bench/cluster.sh --configs memory,1 --latency-seconds 20   # the start latency's window (default 15 s)
#
# Everything it starts (nodes, nats-server, wrk) listens on 127.0.0.1 on free ports, keeps its
# files in a temporary directory and is stopped on exit, also on Ctrl-C or an error.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

duration=20
# JIT warm-up: on two shared cores a node's HTTP and NATS paths take about a minute of load to
# compile; with 10 s the measured window still ran interpreted code (a node's rate grew 3x over
# three 15 s rounds), so the figures measured the JIT, not the design.
warmup=45
connections=24
threads=6
configs="memory,1,2,3"
out=""
heap=768m
# The smallest job (one yield), as deploy/loadtest/wrk-bench.sh submits: what is measured is the
# service's and the cluster's cost per job, not the job's own work (--job for another body).
job='{"workload":{"steps":[{"op":"yield"}]},"timeoutMs":30000}'
latency=1
latency_seconds=15

usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --connections) connections="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --configs) configs="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --heap) heap="$2"; shift 2 ;;
    --job) job="$2"; shift 2 ;;
    --no-latency) latency=0; shift ;;
    --latency-seconds) latency_seconds="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done

require_jar
require_nats
for tool in wrk curl python3; do
  command -v "$tool" >/dev/null || { echo "$tool missing (Debian: apt-get install -y $tool)" >&2; exit 1; }
done
bench_init gosched-cluster-bench

succeeded_all() { succeeded_sum $ports; }

declare -A log_of=()
# start_node NAME [cluster args...]: one more node; its pid joins $node_pids, its port $ports
start_node() {
  local name=$1; shift
  local port; port=$(free_port)
  start_service "$name" "$port" "$@"
  node_pids="$node_pids $service_pid"
  ports="$ports $port"
  log_of[$port]="$work/$name.log"
}

await_all_ready() {
  local p
  for p in $ports; do await_ready "$p" "${log_of[$p]}"; done
}

# wrk for N seconds against every node in $ports; prints its RESULT line
drive() {
  GOSCHED_PORTS="$ports" GOSCHED_JOB="$job" wrk -t"$threads" -c"$connections" -d"${1}s" --timeout 10s \
    -s bench/cluster-submit.lua "http://127.0.0.1:${ports%% *}/api/v1/jobs" > "$work/wrk.out" 2>&1 &
  wrk_pid=$!
  pids+=("$wrk_pid")
  wait "$wrk_pid" || true
  grep '^RESULT' "$work/wrk.out" || { echo "wrk failed:" >&2; cat "$work/wrk.out" >&2; exit 1; }
}


# until the nodes' succeeded count stands still for half a second (at most 60 s): the backlog ran out
await_backlog() {
  local a
  for _ in $(seq 120); do
    a=$(succeeded_all); sleep 0.5; [ "$a" = "$(succeeded_all)" ] && break
  done
}

rows=()
load_start=$(load1)
echo "gosched cluster throughput: $(nproc) cores, job $job, wrk -t$threads -c$connections, ${warmup}s warm-up + ${duration}s measured" >&2
for cfg in ${configs//,/ }; do
  ports=""; node_pids=""; nats_pid=""
  if [ "$cfg" = memory ]; then
    start_node memory
    label="in-memory single node"
  else
    start_nats "$cfg"
    for i in $(seq "$cfg"); do
      start_node "node-$cfg-$i" --gosched.cluster.nats.url="nats://127.0.0.1:$nats_port" --gosched.cluster.node-id="bench-$i"
    done
    label="cluster, $cfg node(s)"
  fi
  ports=${ports# }
  await_all_ready
  echo "[$label] ready on ports $ports; warming up ${warmup}s" >&2
  drive "$warmup" >/dev/null
  # let the warm-up's backlog run out so the window starts from an empty queue
  await_backlog

  la_before=$(load1)
  done_before=$(succeeded_all)
  declare -A cpu_before=()
  for p in $node_pids $nats_pid; do cpu_before[$p]=$(cpu_s "$p"); done
  t0=$(date +%s.%N)
  echo "[$label] measuring ${duration}s" >&2
  result=$(drive "$duration")
  t1=$(date +%s.%N)
  done_after=$(succeeded_all)
  cpus=""
  for p in $node_pids; do
    cpus="$cpus $(awk -v a="${cpu_before[$p]}" -v b="$(cpu_s "$p")" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.2f", (b - a) / (t1 - t0) }')"
  done
  nats_cpu="-"
  if [ -n "$nats_pid" ]; then
    nats_cpu=$(awk -v a="${cpu_before[$nats_pid]}" -v b="$(cpu_s "$nats_pid")" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.2f", (b - a) / (t1 - t0) }')
  fi
  la_after=$(load1)
  secs=$(awk -v d="$(kv "$result" duration_us)" 'BEGIN { printf "%.2f", d / 1e6 }')
  row=$(awk -v a="$(kv "$result" accepted)" -v r="$(kv "$result" refused)" -v o="$(kv "$result" other)" \
    -v c="$((done_after - done_before))" -v s="$secs" -v w="$(awk -v t0="$t0" -v t1="$t1" 'BEGIN { print t1 - t0 }')" \
    -v p50="$(kv "$result" p50_us)" -v p99="$(kv "$result" p99_us)" -v se="$(kv "$result" socket_errors)" \
    'BEGIN { printf "%.0f | %.0f | %.0f | %.1f | %.1f | %d/%d", a / s, r / s, c / w, p50 / 1000, p99 / 1000, o, se }')
  start_lat="- | -"
  if [ "$latency" = 1 ]; then
    await_backlog
    half=$(awk -v c="$((done_after - done_before))" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%d", c / (t1 - t0) / 2 }')
    echo "[$label] start latency: ${half} submissions/s offered for ${latency_seconds}s" >&2
    rm -rf "$work/ids"; mkdir -p "$work/ids"
    GOSCHED_PORTS="$ports" GOSCHED_JOB="$job" GOSCHED_RATE="$half" GOSCHED_THREADS="$threads" GOSCHED_IDS="$work/ids" \
      wrk -t"$threads" -c"$((connections * 2))" -d"${latency_seconds}s" --timeout 10s -s bench/start-latency.lua \
      "http://127.0.0.1:${ports%% *}/api/v1/jobs" > "$work/wrk-latency.out" 2>&1 || true
    sent=$(grep '^RESULT' "$work/wrk-latency.out" || true)
    lat=$(java bench/probes/StartLatency.java "$work/ids" 2000 | grep '^RESULT' || true)
    echo "[$label] wrk: $sent; records: $lat" >&2
    if [ -n "$lat" ] && [ -n "$sent" ]; then
      got=$(awk -v a="$(kv "$sent" accepted)" -v d="$(kv "$sent" duration_us)" 'BEGIN { printf "%.0f", a / (d / 1e6) }')
      start_lat="$(kv "$lat" p50_ms) | $(kv "$lat" p99_ms) (at $got/s of $half/s offered, $(kv "$sent" late_sends) sends late; $(kv "$lat" sampled) jobs)"
    fi
  fi
  rows+=("| $label | $row | ${cpus# } | $nats_cpu | $start_lat | $la_before → $la_after |")
  echo "[$label] ${rows[-1]}" >&2
  unset cpu_before
  stop_pids $node_pids $nats_pid
done

table=$(
  echo "| configuration | submissions/s (202) | refused/s (429, 503) | completions/s | p50 submit (ms) | p99 submit (ms) | other status / socket errors | CPU per node (cores) | nats-server CPU (cores) | p50 submit→start at half rate (ms) | p99 submit→start (ms) | load avg 1 min before → after |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- |"
  printf '%s\n' "${rows[@]}"
)
summary="Run $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores ($(uname -r)), load average at start $load_start, at end $(load1); job \`$job\`; wrk -t$threads -c$connections, ${warmup} s warm-up + ${duration} s measured per configuration; JVMs -Xmx$heap, every node and nats-server on the same cores."
echo
echo "$summary"
echo
echo "$table"
if [ -n "$out" ]; then
  { echo "$summary"; echo; echo "$table"; } > "$out"
  echo "written to $out" >&2
fi
