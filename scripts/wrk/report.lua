-- wrk script for scripts/bench.sh: POSTs status-message reports to one external job
-- (`POST /v1/jobs/{taskId}/report`), each with a new message, and checks every answer.
-- Environment: TOKEN (bearer token). Prints one JSON line like jsonrpc.lua.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("TOKEN")

local threads = {}
function setup(thread)
  table.insert(threads, thread)
end

local n = 0
function request()
  n = n + 1
  return wrk.format(nil, nil, nil, '{"statusMessage":"report ' .. n .. '"}')
end

bad = 0
function response(status, headers, body)
  if status ~= 200 or not string.find(body, '"statusMessage":"report ', 1, true) then
    bad = bad + 1
  end
end

function done(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.timeout + summary.errors.status
  for _, t in ipairs(threads) do errors = errors + t:get("bad") end
  io.write(string.format(
    '{"rps":%.1f,"p50us":%d,"p99us":%d,"requests":%d,"errors":%d}\n',
    summary.requests / (summary.duration / 1e6), latency:percentile(50), latency:percentile(99),
    summary.requests, errors))
end
