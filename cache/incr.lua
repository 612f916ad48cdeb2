-- incr.lua: add to a counter that exists; if it is missing (expired,
-- evicted, flushed), take its lease so that the caller restores it from the
-- system of record, or count the caller as a waiter if another restores it.
-- KEYS[1] count  STRING integer, PX ttl from its last use
-- KEYS[2] lease  HASH t = restorer's token, w = waits counted; PX lease
-- KEYS[3] wake   LIST, 'r' when the restore is done or abandoned
-- ARGV[1] n   ARGV[2] ttl ms   ARGV[3] token, or '' when nothing restores
--         counters (a missing one starts from 0)   ARGV[4] lease ms
-- returns {0, value after adding n}
--         {2}              missing: the caller took the lease and restores
--         {3, lease pttl}  missing: another caller restores it; wait
if ARGV[3] == '' or redis.call('exists', KEYS[1]) == 1 then
  local v = redis.call('incrby', KEYS[1], ARGV[1])
  redis.call('pexpire', KEYS[1], ARGV[2])
  return {0, v}
end
local pttl = redis.call('pttl', KEYS[2])
if pttl == -2 then
  take_lease(KEYS[2], KEYS[3], ARGV[3], ARGV[4])
  return {2}
end
redis.call('hincrby', KEYS[2], 'w', 1)
return {3, pttl}
