-- Shared by the wrk scripts of bench/ (cluster-submit.lua, start-latency.lua, batch-intake.lua):
-- the nodes' ports from GOSCHED_PORTS (wrk thread i talks to node i mod n, so the load is spread
-- evenly when the thread count is a multiple of the node count) and the tally of the answers.
local M = {}
M.threads = {}
local ports, created = {}, 0
for p in string.gmatch(os.getenv("GOSCHED_PORTS") or "", "%d+") do
  ports[#ports + 1] = p
end

-- In setup(thread): points the thread at its node (when GOSCHED_PORTS is set) and keeps it for
-- totals; returns the port and the thread's number.
function M.spread(thread)
  local port = ports[(created % math.max(#ports, 1)) + 1]
  if port then
    thread.addr = wrk.lookup("127.0.0.1", port)[1]
  end
  created = created + 1
  table.insert(M.threads, thread)
  return port, created - 1
end

-- In response(): counts 202 as accepted, 429 and 503 as refused, anything else as other (the
-- thread's globals); true for a 202.
function M.tally(status)
  if status == 202 then
    accepted = accepted + 1
    return true
  elseif status == 429 or status == 503 then
    refused = refused + 1
  else
    other = other + 1
  end
  return false
end

-- In done(): the sum over the threads of each named global.
function M.totals(...)
  local sums = {}
  for i, name in ipairs({...}) do
    sums[i] = 0
    for _, t in ipairs(M.threads) do
      sums[i] = sums[i] + t:get(name)
    end
  end
  return unpack(sums)
end

-- wrk's socket errors of a summary, in one number.
function M.socket_errors(summary)
  local e = summary.errors
  return e.connect + e.read + e.write + e.timeout
end

return M
