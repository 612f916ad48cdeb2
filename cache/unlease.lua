-- unlease.lua: a restorer gives its lease back (its restore failed, or its
-- reply was lost): the waiters registered on it look again, and one takes
-- over at once. Naturally idempotent: a re-send finds the lease gone.
-- KEYS[1] lease   KEYS[2] the lease's wake list (<wake prefix> .. token)
-- ARGV[1] token   ARGV[2] wake list ttl ms
-- returns 1 given back, 0 the lease was not the caller's
local bad = check_types({KEYS[1], 'hash', 'cache counter lease', KEYS[2], 'list', 'cache counter wake list'}) or
  check_hint(KEYS[1], 'w', 'cache counter lease')
if bad then return bad end
if redis.call('hget', KEYS[1], 't') ~= ARGV[1] then return 0 end
local w = tonumber(redis.call('hget', KEYS[1], 'w') or '0')
redis.call('del', KEYS[1])
if w > 0 then
  redis.call('del', KEYS[2])
  redis.call('rpush', KEYS[2], 'r')
  redis.call('pexpire', KEYS[2], ARGV[2])
end
return 1
