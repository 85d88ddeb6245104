-- wrk script for bench/batch-intake.sh: every request is the same POST, GOSCHED_BODY, to the URL
-- given (/api/v1/jobs or /api/v1/jobs/batch); a 202 counts GOSCHED_PER_REQUEST jobs accepted (1 for
-- a single job, the batch's size for a batch). Prints one RESULT line of key=value pairs.
package.path = package.path .. ";" .. debug.getinfo(1, "S").source:match("@?(.*/)") .. "?.lua"
local nodes = require("wrk-nodes")

function setup(thread)
  nodes.spread(thread)
end

function init(args)
  accepted, refused, other = 0, 0, 0
  wrk.method = "POST"
  wrk.body = os.getenv("GOSCHED_BODY")
  wrk.headers["Content-Type"] = "application/json"
end

function response(status, headers, body)
  nodes.tally(status)
end

function done(summary, latency, requests)
  local per = tonumber(os.getenv("GOSCHED_PER_REQUEST") or "1")
  local a, r, o = nodes.totals("accepted", "refused", "other")
  io.write(string.format("RESULT requests_accepted=%d jobs_accepted=%d refused=%d other=%d duration_us=%d p50_us=%d p99_us=%d socket_errors=%d\n",
    a, a * per, r, o, summary.duration, latency:percentile(50), latency:percentile(99), nodes.socket_errors(summary)))
end
