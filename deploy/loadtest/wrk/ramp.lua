-- One phase of the containerized load test (wrk-ramp.sh runs one wrk per phase): small job
-- submissions spread over every node in WRK_TARGETS (comma-separated base URLs; thread i talks to
-- node i mod n), every response counted by its status, every 429 checked for Retry-After.
-- At the end it prints one line for the driver:
--   PHASE {"phase":"...","connections":c,"seconds":s,"requests":n,"rps":r,"p50_ms":x,"p99_ms":y,
--          "max_ms":z,"statuses":{"202":n,...},"retry_after_missing":k,"socket_errors":e}
package.path = package.path .. ";" .. debug.getinfo(1, "S").source:match("@?(.*/)") .. "?.lua"
local common = require("common")

local body = '{"workload":{"steps":[{"op":"yield"}]},"timeoutMs":5000}'
local headers = common.headers()

-- Runs in the main Lua state: wrk.lookup resolves each target; each thread gets one of them.
local targets = {}
for url in string.gmatch(os.getenv("WRK_TARGETS") or "", "[^,]+") do
  local host, port = url:match("^%a+://([^:/]+):?(%d*)")
  if host then
    targets[#targets + 1] = { host = host, port = (port ~= "" and port) or "80" }
  end
end
local threads = {}

function setup(thread)
  if #targets > 0 then
    local t = targets[(#threads % #targets) + 1]
    thread.addr = wrk.lookup(t.host, t.port)[1]
  end
  threads[#threads + 1] = thread
end

-- Per thread (each has its own Lua state): counts read back by done() through thread:get.
statuses = {}
retry_after_missing = 0

function request()
  return wrk.format("POST", "/api/v1/jobs", headers, body)
end

function response(status, hdrs, _)
  statuses[status] = (statuses[status] or 0) + 1
  if status == 429 then
    local found = false
    for name, _ in pairs(hdrs) do
      if string.lower(name) == "retry-after" then
        found = true
      end
    end
    if not found then
      retry_after_missing = retry_after_missing + 1
    end
  end
end

function done(summary, latency, _)
  local total, missing = {}, 0
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("statuses")) do
      total[status] = (total[status] or 0) + n
    end
    missing = missing + thread:get("retry_after_missing")
  end
  local parts = {}
  for status, n in pairs(total) do
    parts[#parts + 1] = string.format('"%d":%d', status, n)
  end
  table.sort(parts)
  local seconds = summary.duration / 1e6
  local e = summary.errors
  io.write(string.format(
    'PHASE {"phase":"%s","connections":%d,"seconds":%.1f,"requests":%d,"rps":%.1f,"p50_ms":%.2f,"p99_ms":%.2f,' ..
    '"max_ms":%.2f,"statuses":{%s},"retry_after_missing":%d,"socket_errors":%d}\n',
    os.getenv("WRK_PHASE") or "", os.getenv("WRK_CONNECTIONS") or 0, seconds, summary.requests,
    summary.requests / seconds, latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
    table.concat(parts, ","), missing, e.connect + e.read + e.write + e.timeout))
end
