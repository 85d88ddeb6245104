#!/usr/bin/env bash
# Drain rate (issue 47, item 2): a backlog of JOBS jobs is queued first, through batch intake, and
# only then do the nodes that run them start; reports how fast they empty it: completions/s and
# completions per CPU-second of the whole system (every node and nats-server), measured from the
# moment every node is ready until the last job succeeded.
#
# Per configuration, in one run:
#   memory  the in-memory single node, as the peer: its backlog is submitted with one notBefore a
#           little after the intake ends, so the jobs wait as delayed and all fall due at once (a
#           process cannot queue work for itself before it starts); the window starts then
#   N       N cluster nodes on one nats-server: an intake node (gosched.cluster.run-jobs=false)
#           takes the backlog and stops, then N nodes start together and drain it
# Besides the whole window it reports the later half (from 50% to 95% of the backlog done), when
# the nodes' JIT has compiled the hot paths: a cluster node starts cold, the in-memory one does not.
# A node runs jobs from before its HTTP readiness can be seen: what it finished by then is left out
# of the window with the CPU it spent (the column "done before every node was ready").
#
#   ./bench/drain.sh                                   # 100,000 jobs; configurations memory,1,3
#   ./bench/drain.sh --jobs 20000 --configs memory,1 --out FILE.md
#   ./bench/drain.sh --job '{"workload":{"steps":[{"op":"compute","us":200}]}}'
#
# Builds nothing: the jar is scheduler-web's Boot jar (./mvnw -B -ntp -DskipTests package -pl
# scheduler-web -am). Needs nats-server, curl, python3. Loopback only, free ports; everything it
# starts is stopped on exit, also on Ctrl-C or an error.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

jobs=100000
configs="memory,1,3"
batch=1000
heap=1g
out=""
job='{"workload":{"steps":[{"op":"yield"}]},"timeoutMs":300000}'

usage() { sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) jobs="$2"; shift 2 ;;
    --configs) configs="$2"; shift 2 ;;
    --batch) batch="$2"; shift 2 ;;
    --heap) heap="$2"; shift 2 ;;
    --job) job="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
[ $((jobs % batch)) -eq 0 ] || { echo "--jobs must be a multiple of --batch ($batch)" >&2; exit 2; }

require_jar
for tool in curl python3; do
  command -v "$tool" >/dev/null || { echo "$tool missing (Debian: apt-get install -y $tool)" >&2; exit 1; }
done
bench_init gosched-drain-bench

# Every node may hold the whole backlog: queued jobs, their requests in the memory budget, and the
# finished ones kept readable (so that every record stays until the count is read).
# A batch of 1,000 is about 100 KB, past the default 64 KiB body limit.
limits=(--gosched.api.admission.max-queued-jobs=10000000 --gosched.api.retention.max-finished-jobs=10000000
  --gosched.api.limits.max-body-bytes=262144)

cpu_sum() { local s=0 p; for p in "$@"; do s=$(awk -v a="$s" -v b="$(cpu_s "$p")" 'BEGIN { printf "%.2f", a + b }'); done; echo "$s"; }

# queue PORT [NOT_BEFORE]: the backlog in batches of $batch, four requests at a time; fails unless every batch got 202
queue() {
  local port=$1 nb=${2:-}
  python3 - "$job" "$batch" "$nb" > "$work/batch.json" <<'EOF'
import json, sys
job = json.loads(sys.argv[1])
if sys.argv[3]:
    job["notBefore"] = sys.argv[3]
print(json.dumps({"jobs": [job] * int(sys.argv[2])}, separators=(",", ":")))
EOF
  seq $((jobs / batch)) | xargs -P 4 -I{} curl -s -o /dev/null -w '%{http_code}\n' -H 'Content-Type: application/json' \
    --data-binary @"$work/batch.json" "http://127.0.0.1:$port/api/v1/jobs/batch" > "$work/codes"
  local bad; bad=$(grep -vc '^202$' "$work/codes" || true)
  [ "$bad" = 0 ] || { echo "intake: $bad of $((jobs / batch)) batches not accepted: $(sort "$work/codes" | uniq -c | tr '\n' ' ')" >&2; exit 1; }
}

# measure PIDS PORTS [FIRST]: samples (time, succeeded, CPU) every half second until the backlog is
# done (10 minutes at most), after the FIRST sample if one is given; prints the row's figures
measure() {
  local pids_=$1 ports_=$2 t d c
  echo "${3:-}" | sed '/^$/d' > "$work/samples"
  for _ in $(seq 1200); do
    t=$(date +%s.%N); d=$(succeeded_sum $ports_); c=$(cpu_sum $pids_)
    echo "$t $d $c" >> "$work/samples"
    [ "$d" -ge "$jobs" ] && break
    sleep 0.5
  done
  python3 - "$jobs" "$work/samples" <<'EOF'
import sys
n = int(sys.argv[1])
rows = [tuple(map(float, l.split())) for l in open(sys.argv[2]) if l.strip()]
t0, d0, c0 = rows[0]
t1, d1, c1 = rows[-1]
if t1 <= t0:  # one sample: the backlog was gone before every node was ready
    print(f"the backlog ran out before every node was ready: ask for more --jobs", file=sys.stderr)
    print(f"{int(d0)} 0 - - - - -")
    sys.exit(0)
def at(frac):  # the first sample with at least frac of the backlog done
    return next(r for r in rows if r[1] >= frac * n)
if d1 < n:
    print(f"unfinished: {int(d1)} of {n} succeeded after {t1 - t0:.0f} s", file=sys.stderr)
a, b = at(0.5), at(0.95) if d1 >= 0.95 * n else rows[-1]
whole = (d1 - d0) / (t1 - t0), (d1 - d0) / max(c1 - c0, 1e-9)
late = (b[1] - a[1]) / max(b[0] - a[0], 1e-9), (b[1] - a[1]) / max(b[2] - a[2], 1e-9)
late_s = f"{late[0]:.0f} {late[1]:.0f}" if b[0] > a[0] else "- -"  # a drain shorter than two samples has no later half
print(f"{int(d0)} {t1 - t0:.1f} {whole[0]:.0f} {whole[1]:.0f} {(c1 - c0) / (t1 - t0):.2f} {late_s}")
EOF
}

rows=()
load_start=$(load1)
echo "gosched drain: $(nproc) cores, $jobs jobs of $job, batches of $batch; load average $load_start" >&2
for cfg in ${configs//,/ }; do
  nats_pid=""; pids_now=""; ports_now=""; first=""
  if [ "$cfg" = memory ]; then
    port=$(free_port)
    start_service memory "$port" "${limits[@]}"
    await_ready "$port" "$work/memory.log"
    # All due at once, after the intake: its rate here is about 5,000 jobs/s, the margin is wide.
    lead=$((20 + jobs / 1000))
    due=$(date -u -d "+${lead} seconds" +%Y-%m-%dT%H:%M:%S.000Z)
    t_in=$(date +%s.%N)
    queue "$port" "$due"
    intake_s=$(awk -v a="$t_in" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    echo "[memory] queued $jobs in ${intake_s}s, due at $due" >&2
    [ "$(succeeded "$port")" = 0 ] || { echo "[memory] jobs ran before they were due" >&2; exit 1; }
    # The window starts at the due instant itself: the node drains faster than it can be sampled
    # around it. Its CPU is read just before, with nothing running (checked).
    due_s=$(date -u -d "$due" +%s)
    while [ "$(awk -v d="$due_s" -v n="$(date +%s.%N)" 'BEGIN { print (d - n > 0.3) }')" = 1 ]; do sleep 0.05; done
    first="$due_s $(succeeded "$port") $(cpu_s "$service_pid")"
    [ "$(echo "$first" | cut -d' ' -f2)" = 0 ] || { echo "[memory] jobs ran before they were due" >&2; exit 1; }
    while [ "$(awk -v d="$due_s" -v n="$(date +%s.%N)" 'BEGIN { print (d - n > 0) }')" = 1 ]; do sleep 0.01; done
    pids_now=$service_pid; ports_now=$port
    label="in-memory single node"
  else
    require_nats
    start_nats "drain-$cfg"
    url="nats://127.0.0.1:$nats_port"
    port=$(free_port)
    start_service "intake-$cfg" "$port" "${limits[@]}" --gosched.cluster.nats.url="$url" --gosched.cluster.node-id=intake \
      --gosched.cluster.run-jobs=false
    intake_pid=$service_pid
    await_ready "$port" "$work/intake-$cfg.log"
    t_in=$(date +%s.%N)
    queue "$port"
    intake_s=$(awk -v a="$t_in" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    echo "[$cfg] queued $jobs through an intake node in ${intake_s}s; it stops, $cfg node(s) start" >&2
    stop_pids "$intake_pid"
    for i in $(seq "$cfg"); do
      p=$(free_port)
      start_service "node-$cfg-$i" "$p" "${limits[@]}" --gosched.cluster.nats.url="$url" --gosched.cluster.node-id="drain-$i"
      pids_now="$pids_now $service_pid"; ports_now="$ports_now $p"
    done
    i=0
    for p in $ports_now; do i=$((i + 1)); await_ready "$p" "$work/node-$cfg-$i.log"; done
    label="cluster, $cfg node(s)"
  fi
  la_before=$(load1)
  read -r early secs rate per_cpu cores late_rate late_per_cpu <<<"$(measure "$pids_now $nats_pid" "$ports_now" "${first:-}")"
  rows+=("| $label | $intake_s | $early | $secs | $rate | $per_cpu | $cores | $late_rate | $late_per_cpu | $la_before → $(load1) |")
  echo "[$label] ${rows[-1]}" >&2
  stop_pids $pids_now $nats_pid
done

table=$(
  echo "| configuration | intake of the backlog (s) | done before every node was ready | drain (s) | completions/s | completions per CPU-second | CPU (cores, nodes + nats-server) | later half: completions/s | later half: per CPU-second | load avg 1 min before → after |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
  printf '%s\n' "${rows[@]}"
)
summary="Run $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores ($(uname -r)), load average at start $load_start, at end $(load1); $jobs jobs \`$job\` queued in batches of $batch before the nodes start; JVMs -Xmx$heap, every node and nats-server on the same cores."
echo
echo "$summary"
echo
echo "$table"
if [ -n "$out" ]; then
  { echo "$summary"; echo; echo "$table"; } > "$out"
  echo "written to $out" >&2
fi
