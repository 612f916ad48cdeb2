-- release.lua: delete the lock if it still holds our token, and wake one
-- waiter if anyone is waiting.
-- KEYS[1] owner key   KEYS[2] waiting key   KEYS[3] wake key (LIST)
-- ARGV[1] token
-- returns 1 released, 0 not held (expired, or taken by another since)
if redis.call('get', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('del', KEYS[1])
-- One pending token is enough: only one waiter can take the lock.
local w = redis.call('pttl', KEYS[2])
if w > 0 and redis.call('llen', KEYS[3]) == 0 then
  redis.call('lpush', KEYS[3], '1')
  redis.call('pexpire', KEYS[3], w)
end
return 1
