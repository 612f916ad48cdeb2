-- refresh.lua: extend a live permit's deadline to now + timeout. A re-run
-- after a lost reply extends again and answers the same. (check_type comes
-- from internal/script's check.lua.)
-- KEYS[1] holders ZSET (permit ID -> deadline, server Unix ms)
-- ARGV[1] permit ID   ARGV[2] timeout ms
-- returns 1 refreshed, 0 not held (expired or released; the ID is removed)
local holders = KEYS[1]
local id = ARGV[1]
local timeout = tonumber(ARGV[2])

local bad = check_type(holders, 'zset', 'semaphore holders')
if bad then return bad end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local score = redis.call('ZSCORE', holders, id)
if not score or tonumber(score) <= now then
  if score then redis.call('ZREM', holders, id) end
  return 0
end
redis.call('ZADD', holders, 'XX', string.format('%d', now + timeout), id)
if redis.call('PTTL', holders) < timeout then
  redis.call('PEXPIRE', holders, string.format('%d', timeout))
end
return 1
