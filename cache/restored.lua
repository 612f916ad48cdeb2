-- restored.lua: set a missing counter to the value restored from the system
-- of record, add the restorer's n, end its lease and wake the waiters (they
-- then add theirs). If the counter exists by now (the lease ran out and
-- another restorer was first), only n is added: the restored value is
-- applied at most once, and no increment is lost.
-- KEYS[1] count   KEYS[2] lease   KEYS[3] wake
-- ARGV[1] n   ARGV[2] ttl ms   ARGV[3] token   ARGV[4] restored value
-- ARGV[5] wake list ttl ms
-- returns the counter's value after adding n
if redis.call('exists', KEYS[1]) == 0 then
  redis.call('set', KEYS[1], ARGV[4])
end
local v = redis.call('incrby', KEYS[1], ARGV[1])
redis.call('pexpire', KEYS[1], ARGV[2])
if redis.call('hget', KEYS[2], 't') == ARGV[3] then
  local w = tonumber(redis.call('hget', KEYS[2], 'w') or '0')
  redis.call('del', KEYS[2])
  if w > 0 then
    redis.call('del', KEYS[3])
    redis.call('rpush', KEYS[3], 'r')
    redis.call('pexpire', KEYS[3], ARGV[5])
  end
end
return v
