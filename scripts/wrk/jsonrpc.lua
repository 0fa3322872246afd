-- wrk script for scripts/bench.sh: POSTs one JSON-RPC request over and over and checks every
-- answer. Environment: BODY (the request body), TOKEN (bearer token, optional), MCP_METHOD and
-- MCP_NAME (the Mcp-Method / Mcp-Name headers, sent with
-- MCP-Protocol-Version 2026-07-28), EXPECT (a string every 200 body must contain).
-- Prints one JSON line: {"rps":..,"p50us":..,"p99us":..,"requests":..,"errors":..}.
wrk.method = "POST"
wrk.body = os.getenv("BODY")
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
local token = os.getenv("TOKEN")
if token and token ~= "" then wrk.headers["Authorization"] = "Bearer " .. token end
local method = os.getenv("MCP_METHOD")
if method and method ~= "" then
  wrk.headers["Mcp-Protocol-Version"] = "2026-07-28"
  wrk.headers["Mcp-Method"] = method
  wrk.headers["Mcp-Name"] = os.getenv("MCP_NAME")
end
local expect = os.getenv("EXPECT") or ""

local threads = {}
function setup(thread)
  table.insert(threads, thread)
end

bad = 0
function response(status, headers, body)
  if status ~= 200 or not string.find(body, expect, 1, true) then
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
