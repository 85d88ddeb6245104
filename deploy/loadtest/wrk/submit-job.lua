-- Small job submissions: POST /api/v1/jobs with a one-step workload.
-- wrk -t2 -c64 -d15s -s submit-job.lua http://127.0.0.1:8080
package.path = package.path .. ";" .. debug.getinfo(1, "S").source:match("@?(.*/)") .. "?.lua"
local common = require("common")

local body = '{"workload":{"steps":[{"op":"yield"}]},"timeoutMs":5000}'

function setup(thread) end

function request()
  return wrk.format("POST", "/api/v1/jobs", common.headers(), body)
end

function done(summary, latency, requests)
  common.report("job_submissions", 1, summary, latency)
end
