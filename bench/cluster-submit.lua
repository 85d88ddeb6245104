-- wrk script for bench/cluster.sh: every request submits the same short job (POST /api/v1/jobs).
-- GOSCHED_PORTS lists the nodes' loopback ports; wrk thread i talks to node i mod n, so the load is
-- spread evenly when the thread count is a multiple of the node count. GOSCHED_JOB is the body.
local ports = {}
for p in string.gmatch(os.getenv("GOSCHED_PORTS") or "", "%d+") do
  ports[#ports + 1] = p
end
local threads = {}
local created = 0

function setup(thread)
  local port = ports[(created % #ports) + 1]
  thread.addr = wrk.lookup("127.0.0.1", port)[1]
  created = created + 1
  table.insert(threads, thread)
end

function init(args)
  accepted, refused, other = 0, 0, 0
  wrk.method = "POST"
  wrk.body = os.getenv("GOSCHED_JOB")
  wrk.headers["Content-Type"] = "application/json"
end

function response(status, headers, body)
  if status == 202 then
    accepted = accepted + 1
  elseif status == 429 or status == 503 then
    refused = refused + 1
  else
    other = other + 1
  end
end

function done(summary, latency, requests)
  local a, r, o = 0, 0, 0
  for _, t in ipairs(threads) do
    a = a + t:get("accepted")
    r = r + t:get("refused")
    o = o + t:get("other")
  end
  local e = summary.errors
  io.write(string.format("RESULT accepted=%d refused=%d other=%d requests=%d duration_us=%d p50_us=%d p99_us=%d " ..
    "socket_errors=%d\n", a, r, o, summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.timeout))
end
