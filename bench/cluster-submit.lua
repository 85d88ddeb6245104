-- wrk script for bench/cluster.sh: every request submits the same short job (POST /api/v1/jobs).
-- GOSCHED_PORTS lists the nodes' loopback ports (spread over wrk's threads by wrk-nodes.lua);
-- GOSCHED_JOB is the body.
package.path = package.path .. ";" .. debug.getinfo(1, "S").source:match("@?(.*/)") .. "?.lua"
local nodes = require("wrk-nodes")

function setup(thread)
  nodes.spread(thread)
end

function init(args)
  accepted, refused, other = 0, 0, 0
  wrk.method = "POST"
  wrk.body = os.getenv("GOSCHED_JOB")
  wrk.headers["Content-Type"] = "application/json"
end

function response(status, headers, body)
  nodes.tally(status)
end

function done(summary, latency, requests)
  local a, r, o = nodes.totals("accepted", "refused", "other")
  io.write(string.format("RESULT accepted=%d refused=%d other=%d requests=%d duration_us=%d p50_us=%d p99_us=%d " ..
    "socket_errors=%d\n", a, r, o, summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    nodes.socket_errors(summary)))
end
