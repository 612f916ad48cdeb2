-- release.lua: give up a lease (a failed load or restore), or delete an
-- entry and end any lease on it (Delete). Waiters are told to look again
-- ('r'), so one of them takes over at once.
-- KEYS[1] val or count   KEYS[2] lease   KEYS[3] wake
-- ARGV[1] the caller's lease token, or '' to delete KEYS[1] and any lease
-- ARGV[2] wake list ttl ms
-- ARGV[3] hold ms: if nobody waits, keep the lease this long instead of
--         deleting it (a failed background refresh is not retried at once)
-- returns 1 done, 0 the lease was not the caller's
if ARGV[1] == '' then
  redis.call('del', KEYS[1])
elseif redis.call('hget', KEYS[2], 't') ~= ARGV[1] then
  return 0
end
local w = tonumber(redis.call('hget', KEYS[2], 'w') or '0')
if w == 0 and tonumber(ARGV[3]) > 0 then
  redis.call('pexpire', KEYS[2], ARGV[3])
  return 1
end
redis.call('del', KEYS[2])
if w > 0 then
  redis.call('del', KEYS[3])
  redis.call('rpush', KEYS[3], 'r')
  redis.call('pexpire', KEYS[3], ARGV[2])
end
return 1
