-- Shared by the gosched wrk scripts: auth header and a one-line machine-readable summary.
local M = {}

function M.headers()
  local h = { ["Content-Type"] = "application/json" }
  local token = os.getenv("WRK_TOKEN")
  if token and token ~= "" then
    h["Authorization"] = "Bearer " .. token
  end
  return h
end

-- Prints: RESULT name=<name> requests=<n> rps=<r> p50_ms=<x> p99_ms=<y> max_ms=<z> non2xx=<k> errors=<e>
function M.report(name, per_request, summary, latency)
  local seconds = summary.duration / 1e6
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  io.write(string.format(
    "RESULT name=%s requests=%d rps=%.0f ops_per_s=%.0f p50_ms=%.2f p99_ms=%.2f max_ms=%.2f non2xx=%d errors=%d\n",
    name, summary.requests, summary.requests / seconds, summary.requests / seconds / per_request,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
    summary.errors.status, errors))
end

return M
