-- extend.lua: the heartbeat of a worker: push back the lease deadline of
-- each run it still holds to now + lease. Running it twice (a re-send)
-- gives the same answer. (lib.lua is prepended.)
-- KEYS[1] inflight ZSET '<id>:<lease token>' -> deadline (see common.lua)
-- ARGV[1] lease ms, then (id, lease token) per run
-- returns one integer per run: 1 extended, 0 no longer held (the lease
--         expired and the task was recovered, or it was settled)
local runs = {}
for i = 2, #ARGV, 2 do runs[#runs + 1] = ARGV[i] .. ':' .. ARGV[i + 1] end
local scores = rd('zset', 'queue in-flight set', 'zmscore', KEYS[1], unpack(runs))
if BAD then return BAD end
local deadline = now_ms() + tonumber(ARGV[1])
local out, args = {}, {}
for i, run in ipairs(runs) do
  if scores[i] then
    out[i] = 1
    args[#args + 1] = deadline
    args[#args + 1] = run
  else
    out[i] = 0
  end
end
if #args > 0 then redis.call('zadd', KEYS[1], 'XX', unpack(args)) end
return out
