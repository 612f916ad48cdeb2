-- refresh.lua: extend a live permit's deadline to now + timeout.
-- KEYS[1] holders ZSET (permit ID -> deadline, server Unix ms)
-- ARGV[1] permit ID   ARGV[2] timeout ms
-- returns 1 refreshed, 0 not held (expired or released; the ID is removed)
local holders = KEYS[1]
local id = ARGV[1]
local timeout = tonumber(ARGV[2])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local score = redis.call('ZSCORE', holders, id)
if not score or tonumber(score) <= now then
	redis.call('ZREM', holders, id)
	return 0
end
redis.call('ZADD', holders, 'XX', string.format('%d', now + timeout), id)
if redis.call('PTTL', holders) < timeout then
	redis.call('PEXPIRE', holders, string.format('%d', timeout))
end
return 1
