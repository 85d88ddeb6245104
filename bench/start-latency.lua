-- wrk script for bench/cluster.sh's start latency: submissions paced to GOSCHED_RATE per second in
-- all (each thread keeps its share on a schedule of its own, whatever its connections' answers
-- take, so a slow service meets the offered rate instead of slowing its client down while
-- connections are free), spread over the nodes in GOSCHED_PORTS as cluster-submit.lua does. Each
-- 202's job id goes, with the port that took it, to GOSCHED_IDS/ids-<thread>.txt, from which
-- bench/probes/StartLatency.java reads the jobs' records afterwards. Prints one RESULT line.
local ffi = require("ffi")
ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } gosched_timespec;
  int clock_gettime(int clk_id, gosched_timespec *tp);
]]
local ts = ffi.new("gosched_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end

package.path = package.path .. ";" .. debug.getinfo(1, "S").source:match("@?(.*/)") .. "?.lua"
local nodes = require("wrk-nodes")

function setup(thread)
  local port, n = nodes.spread(thread)
  thread:set("n", n)
  thread:set("port", port)
end

function init(args)
  accepted, refused, other, late = 0, 0, 0, 0
  wrk.method = "POST"
  wrk.body = os.getenv("GOSCHED_JOB")
  wrk.headers["Content-Type"] = "application/json"
  out = io.open(os.getenv("GOSCHED_IDS") .. "/ids-" .. n .. ".txt", "w")
  slot = nil
end

-- The next submission's slot on this thread's schedule: one every nthreads / rate seconds.
function delay()
  local t = now_ms()
  if slot == nil then
    interval = 1000 * tonumber(os.getenv("GOSCHED_THREADS")) / tonumber(os.getenv("GOSCHED_RATE"))
    slot = t
  end
  slot = slot + interval
  local wait = slot - t
  if wait < -10 then
    late = late + 1 -- every connection was busy: the schedule slipped
  end
  return wait > 0 and wait or 0
end

function response(status, headers, body)
  if nodes.tally(status) then
    local id = string.match(body, '"id"%s*:%s*"([^"]+)"')
    if id then
      out:write(id, " ", port, "\n")
      out:flush()
    end
  end
end

function done(summary, latency, requests)
  local a, r, o, l = nodes.totals("accepted", "refused", "other", "late")
  io.write(string.format("RESULT accepted=%d refused=%d other=%d late_sends=%d duration_us=%d socket_errors=%d\n",
    a, r, o, l, summary.duration, nodes.socket_errors(summary)))
end
