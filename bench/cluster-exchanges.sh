#!/usr/bin/env bash
# NATS messages per job on a real nats-server (issue 47, item 1): one cluster node on one
# nats-server started with its monitoring port, N jobs of one yield submitted, each with its own
# POST /api/v1/jobs (the hot path bench/cluster.sh drives), until every one succeeded. Then the
# same wall time again with no job at all, the idle cost (heartbeats, pull scans, consumer info
# polls), which is subtracted.
#
# Reports per job, from the server's own counters (idle subtracted):
#   - messages into and out of the server (/varz in_msgs, out_msgs: what clients send it and what
#     it delivers to subscriptions, JetStream API replies and PubAcks included),
#   - JetStream API calls (/jsz api.total: fetch requests, consumer infos, KV reads...),
#   - writes to the ticket stream GOSCHED_JOBS and to the record bucket KV_gosched_jobs (their
#     last sequence moves once per stored message: a ticket publish, a record create or CAS),
#   - deliveries of each consumer that moved (/jsz consumer_detail delivered.consumer_seq),
#   - messages delivered per subscription of the node's connection (/connz subs=detail; a fetch's
#     own short-lived subscription is gone by then and shows only in out_msgs).
#
# Builds nothing; the jar is scheduler-web's Boot jar:
#   ./mvnw -B -ntp -o -DskipTests package -pl scheduler-web -am
#
#   ./bench/cluster-exchanges.sh                 # 2,000 jobs, 8 submitters
#   ./bench/cluster-exchanges.sh --jobs 5000 --submitters 16 --out FILE.md
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

jobs=2000
submitters=8
heap=768m
out=""
job='{"workload":{"steps":[{"op":"yield"}]}}'

usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) jobs="$2"; shift 2 ;;
    --submitters) submitters="$2"; shift 2 ;;
    --heap) heap="$2"; shift 2 ;;
    --job) job="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done

require_jar
require_nats
for tool in curl python3; do
  command -v "$tool" >/dev/null || { echo "$tool missing (Debian: apt-get install -y $tool)" >&2; exit 1; }
done
bench_init gosched-cluster-exchanges

# nats-server with JetStream and its monitoring port ($mon_port)
nats_port=$(free_port)
mon_port=$(free_port)
mkdir -p "$work/nats"
"$nats_bin" -js -sd "$work/nats" -a 127.0.0.1 -p "$nats_port" -m "$mon_port" >"$work/nats.log" 2>&1 &
nats_pid=$!
pids+=("$nats_pid")
for _ in $(seq 100); do grep -q "Server is ready" "$work/nats.log" && break; sleep 0.1; done
grep -q "Server is ready" "$work/nats.log" || { echo "nats-server did not start:" >&2; cat "$work/nats.log" >&2; exit 1; }

port=$(free_port)
start_service node "$port" --gosched.cluster.nats.url="nats://127.0.0.1:$nats_port" --gosched.cluster.node-id=exchanges-1
await_ready "$port" "$work/node.log"
sleep 5 # start-up's provisioning and first full scans out of the window

# snapshot FILE: the server's counters now, as one JSON object
snapshot() {
  MON="http://127.0.0.1:$mon_port" python3 - "$1" <<'EOF'
import json, os, sys, urllib.request
mon = os.environ["MON"]
get = lambda p: json.load(urllib.request.urlopen(mon + p))
v = get("/varz")
s = {"in_msgs": v["in_msgs"], "out_msgs": v["out_msgs"], "in_bytes": v["in_bytes"], "out_bytes": v["out_bytes"]}
j = get("/jsz?accounts=true&streams=true&consumers=true")
s["js_api_total"] = j["api"]["total"]
s["js_api_errors"] = j["api"]["errors"]
for a in j.get("account_details") or []:
    for st in a.get("stream_detail") or []:
        s["stream " + st["name"] + " writes"] = st["state"]["last_seq"]
        for c in st.get("consumer_detail") or []:
            s["consumer " + st["name"] + "/" + c["name"] + " deliveries"] = c["delivered"]["consumer_seq"]
c = get("/connz?subs=detail&limit=1024")
for conn in c.get("connections") or []:
    name = conn.get("name") or ("cid " + str(conn["cid"]))
    for sd in conn.get("subscriptions_list_detail") or []:
        subj = sd["subject"]
        # an inbox's random part says nothing; its sid tells subscriptions apart
        label = subj if not subj.startswith("_INBOX.") else "_INBOX.* (sid " + str(sd["sid"]) + ")"
        s["sub " + name + " " + label] = sd.get("msgs", 0)
json.dump(s, open(sys.argv[1], "w"))
EOF
}

# submit: N POSTs over keep-alive connections from $submitters threads; prints "accepted other"
submit() {
  URL="http://127.0.0.1:$port/api/v1/jobs" JOB="$job" N="$jobs" T="$submitters" python3 <<'EOF'
import http.client, os, threading, urllib.parse
u = urllib.parse.urlparse(os.environ["URL"]); body = os.environ["JOB"].encode()
n, t = int(os.environ["N"]), int(os.environ["T"])
counts = {"accepted": 0, "other": 0}; lock = threading.Lock()
def run(k):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    a = o = 0
    for _ in range(k):
        c.request("POST", u.path, body, {"Content-Type": "application/json"})
        r = c.getresponse(); r.read()
        if r.status == 202: a += 1
        else: o += 1
    with lock:
        counts["accepted"] += a; counts["other"] += o
ts = [threading.Thread(target=run, args=(n // t + (1 if i < n % t else 0),)) for i in range(t)]
for x in ts: x.start()
for x in ts: x.join()
print(counts["accepted"], counts["other"])
EOF
}

done0=$(succeeded "$port")
snapshot "$work/a.json"
t0=$(date +%s.%N)
read -r accepted other < <(submit)
[ "$other" = 0 ] || { echo "$other submissions were not answered 202" >&2; exit 1; }
for _ in $(seq 1200); do
  [ $(( $(succeeded "$port") - done0 )) -ge "$jobs" ] && break
  sleep 0.1
done
[ $(( $(succeeded "$port") - done0 )) -ge "$jobs" ] || { echo "not every job succeeded within 2 minutes" >&2; exit 1; }
t1=$(date +%s.%N)
snapshot "$work/b.json"
wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
echo "[exchanges] $accepted jobs submitted and succeeded in ${wall}s; idle baseline for as long" >&2
snapshot "$work/c.json"
sleep "$wall"
snapshot "$work/d.json"

report=$(N="$jobs" WALL="$wall" python3 - "$work"/{a,b,c,d}.json <<'EOF'
import json, os, sys
a, b, c, d = (json.load(open(f)) for f in sys.argv[1:5])
n = int(os.environ["N"])
keys = sorted(set(a) | set(b) | set(c) | set(d))
order = ["in_msgs", "out_msgs", "js_api_total", "js_api_errors", "in_bytes", "out_bytes"]
keys = [k for k in order if k in keys] + [k for k in keys if k not in order]
print("| counter | with jobs | idle, same wall time | per job (idle subtracted) |")
print("| --- | ---: | ---: | ---: |")
for k in keys:
    job = b.get(k, 0) - a.get(k, 0)
    idle = d.get(k, 0) - c.get(k, 0)
    if job == 0 and idle == 0:
        continue
    print(f"| {k} | {job} | {idle} | {(job - idle) / n:.2f} |")
EOF
)
summary="Run $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $("$nats_bin" --version 2>&1 | head -1); one node, $jobs jobs \`$job\` (one POST each, $submitters submitters), all succeeded in ${wall} s; idle baseline over the same ${wall} s."
echo
echo "$summary"
echo
echo "$report"
if [ -n "$out" ]; then
  { echo "$summary"; echo; echo "$report"; } > "$out"
  echo "written to $out" >&2
fi
