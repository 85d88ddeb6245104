# Probe for docs/memory.md (not part of the build): the live heap (after full GCs, jcmd GC.run)
# that finished one-step jobs, parked goroutines and open telemetry SSE streams hold in a running
# gosched service, against what the memory budget charges for them (GET /api/v1/limits).
#   java -Xmx2g -jar scheduler-web/target/scheduler-web-0.1.0-SNAPSHOT.jar --server.port=PORT &
#   python3 bench/probes/fixed_charges.py http://127.0.0.1:PORT <service pid>   (SKIP_JOBS=1: skip part 1)
import json, os, socket, subprocess, sys, time, urllib.request
base, pid = sys.argv[1], sys.argv[2]
jcmd = "/usr/lib/jvm/temurin-25-jdk-amd64/bin/jcmd"
def get(p): return json.load(urllib.request.urlopen(base + p, timeout=60))
def post(p, body):
    r = urllib.request.Request(base + p, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(r, timeout=60))
def delete(p):
    try: urllib.request.urlopen(urllib.request.Request(base + p, method="DELETE"), timeout=60).read()
    except Exception as e: pass
def live():
    for _ in range(3):
        subprocess.run([jcmd, pid, "GC.run"], capture_output=True); time.sleep(0.5)
    return get("/actuator/metrics/jvm.memory.used?tag=area:heap")["measurements"][0]["value"]
def held(): return get("/api/v1/limits")["memory"]["heldBy"]
def finished():
    m = get("/actuator/metrics/gosched.jobs.finished")
    return m["measurements"][0]["value"]
if os.environ.get("SKIP_JOBS"): N = 0
print("1. finished one-step jobs")
N = 0 if os.environ.get("SKIP_JOBS") else 1000
b0, h0 = live(), held()["finished_jobs"]; f0 = 0
try: f0 = finished()
except Exception: pass
for i in range(N if N else 0):
    post("/api/v1/jobs", {"workload": {"steps": [{"op": "compute", "us": 1}]}})
while N and finished() < f0 + N: time.sleep(0.5)
b1, h1 = live(), held()["finished_jobs"]
if N: print(f"   {N} jobs: live heap +{(b1-b0)/N:.0f} B a job, charged {(h1-h0)/N:.0f} B a job (finished_jobs)")
print("2. parked goroutines")
G = 10000
b0, r0 = live(), held()["running_jobs"]
j = post("/api/v1/jobs", {"timeoutMs": 300000, "workload": {"channels": [{"name": "never", "capacity": 0}], "steps": [{"op": "spawn", "count": G, "steps": [{"op": "recv", "channel": "never"}]}, {"op": "wait"}]}})
time.sleep(3)
time.sleep(10); print("   job state:", get("/api/v1/jobs/" + j["id"]).get("state"))
b1, r1 = live(), held()["running_jobs"]
print(f"   {G} goroutines parked in a receive: live heap +{(b1-b0)/G:.0f} B each, charged {(r1-r0)/G:.0f} B each (running_jobs, job's run and request included)")
delete("/api/v1/jobs/" + j["id"]); time.sleep(3)
print("3. open telemetry SSE streams")
S = 500
b0, s0 = live(), held()["streams"]
socks = []
host, port = base.split("//")[1].split(":")
for i in range(S):
    s = socket.create_connection((host, int(port)))
    s.sendall(f"GET /api/v1/telemetry/stream?intervalMs=60000 HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n\r\n".encode())
    socks.append(s)
time.sleep(5)
b1, s1 = live(), held()["streams"]
print(f"   {S} streams open ({get('/api/v1/limits')['streams']['open']} counted): live heap +{(b1-b0)/S:.0f} B each, charged {(s1-s0)/S:.0f} B each")
for s in socks: s.close()
