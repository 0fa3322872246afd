-- wrk script for scripts/bench-fleet.sh: a 2026-07-28 `tasks/get` of a task picked at random
-- (uniformly, per request) from a file of task ids, one id per line, so that a large store is
-- polled the way a fleet of agents polls it rather than one hot task. Every answer is checked
-- (status 200 and `"resultType":"complete"`) and the result printed by jsonrpc.lua (run from
-- the repository root). Environment: IDS (the file of ids), TOKEN, EXPECT, SEED (optional,
-- the random seed; default 1, so that runs compare the same sequence of ids).
dofile("scripts/wrk/jsonrpc.lua")

local ids = {}
for line in io.lines(os.getenv("IDS")) do
  if line ~= "" then ids[#ids + 1] = line end
end
if #ids == 0 then error("random_get.lua: no ids in " .. tostring(os.getenv("IDS"))) end
math.randomseed(tonumber(os.getenv("SEED") or "1"))

local meta = '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
  .. '"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"},'
  .. '"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}'
local headers = {}
for k, v in pairs(wrk.headers) do headers[k] = v end
headers["Mcp-Protocol-Version"] = "2026-07-28"
headers["Mcp-Method"] = "tasks/get"

function request()
  local id = ids[math.random(#ids)]
  headers["Mcp-Name"] = id
  return wrk.format("POST", nil, headers,
    '{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"' .. id .. '",' .. meta .. '}}')
end
