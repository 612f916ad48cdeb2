-- holders.lua: count the live holders (deadline after the server's now).
-- (check_type comes from internal/script's check.lua.)
-- KEYS[1] holders ZSET (permit ID -> deadline, server Unix ms)
-- returns the count
local bad = check_type(KEYS[1], 'zset', 'semaphore holders')
if bad then return bad end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], '(' .. string.format('%d', now), '+inf')
