-- Channel round trips: each connection alternates POST .../send and POST .../recv on one
-- buffered channel, so every pair is one value in and out. The channel is named by
-- WRK_CHANNEL and must exist (wrk-bench.sh creates it).
-- wrk -t2 -c64 -d15s -s channel-roundtrip.lua http://127.0.0.1:8080
package.path = package.path .. ";" .. debug.getinfo(1, "S").source:match("@?(.*/)") .. "?.lua"
local common = require("common")

local channel = os.getenv("WRK_CHANNEL") or "bench"
local send_path = "/api/v1/channels/" .. channel .. "/send"
local recv_path = "/api/v1/channels/" .. channel .. "/recv"
local send_body = '{"value":{"n":1},"timeoutMs":1000}'
local recv_body = '{"timeoutMs":1000}'
local turn = 0

function request()
  turn = turn + 1
  if turn % 2 == 1 then
    return wrk.format("POST", send_path, common.headers(), send_body)
  end
  return wrk.format("POST", recv_path, common.headers(), recv_body)
end

function done(summary, latency, requests)
  -- two requests per round trip; rps counts channel operations
  common.report("channel_ops", 2, summary, latency)
end
