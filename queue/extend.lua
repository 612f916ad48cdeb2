-- extend.lua: the heartbeat of a worker: push back the lease deadline of
-- each run it still holds to now + lease.
-- KEYS[1] inflight ZSET '<id>:<lease token>' -> deadline (see common.lua)
-- ARGV[1] lease ms, then (id, lease token) per run
-- returns one integer per run: 1 extended, 0 no longer held (the lease
--         expired and the task was recovered, or it was settled)
local t = redis.call('time')
local deadline = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
local out = {}
for i = 2, #ARGV, 2 do
  local run = ARGV[i] .. ':' .. ARGV[i + 1]
  if redis.call('zscore', KEYS[1], run) then
    redis.call('zadd', KEYS[1], deadline, run)
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
