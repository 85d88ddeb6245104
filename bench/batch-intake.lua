-- wrk script for bench/batch-intake.sh: every request is the same POST, GOSCHED_BODY, to the URL
-- given (/api/v1/jobs or /api/v1/jobs/batch); a 202 counts GOSCHED_PER_REQUEST jobs accepted (1 for
-- a single job, the batch's size for a batch). Prints one RESULT line of key=value pairs.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  accepted, refused, other = 0, 0, 0
  wrk.method = "POST"
  wrk.body = os.getenv("GOSCHED_BODY")
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
  local per = tonumber(os.getenv("GOSCHED_PER_REQUEST") or "1")
  local a, r, o = 0, 0, 0
  for _, t in ipairs(threads) do
    a = a + t:get("accepted")
    r = r + t:get("refused")
    o = o + t:get("other")
  end
  local e = summary.errors
  io.write(string.format("RESULT requests_accepted=%d jobs_accepted=%d refused=%d other=%d duration_us=%d p50_us=%d p99_us=%d socket_errors=%d\n",
    a, a * per, r, o, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.timeout))
end
