-- cart.lua: set the count of an item in a session's cart (0 removes it),
-- and mark the session as seen now, so that the cleaner tracks every cart.
-- Run as a once-script: a re-send of the call is answered from the record
-- of its first reply instead of setting the count again, so it never puts
-- back an item that another client's checkout cleared meanwhile. Refusals
-- come before the first write, so they leave neither data nor a record.
-- KEYS[1] recent  ZSET token -> last seen (server Unix µs)
-- KEYS[2] cart    HASH of the session: item -> count
-- ARGV[1] token   ARGV[2] item   ARGV[3] count (>= 0)
-- returns 1
-- Every key is checked before the first write.
local bad = check_types({KEYS[1], 'zset', 'session recent', KEYS[2], 'hash', 'session cart'})
if bad then return bad end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

if tonumber(ARGV[3]) > 0 then
  redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
else
  redis.call('HDEL', KEYS[2], ARGV[2])
end
redis.call('ZADD', KEYS[1], string.format('%d', now), ARGV[1])
return 1
