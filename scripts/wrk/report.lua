-- wrk script for scripts/bench.sh: POSTs status-message reports to one external job
-- (`POST /v1/jobs/{taskId}/report`), each with a new message. Answers are checked and the
-- result printed by jsonrpc.lua (run from the repository root); environment: TOKEN, EXPECT.
dofile("scripts/wrk/jsonrpc.lua")

local n = 0
function request()
  n = n + 1
  return wrk.format(nil, nil, nil, '{"statusMessage":"report ' .. n .. '"}')
end
