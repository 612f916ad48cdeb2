-- restored.lua: set a missing counter to the value restored from the system
-- of record plus the restorer's n, end its lease and wake the waiters
-- registered on it (they then add theirs). If the counter exists by now
-- (the lease ran out and another restorer was first), only n is added: the
-- restored value is applied at most once, and no increment is lost. Run as
-- a once-script: a re-send is answered from the first run's record.
-- KEYS[1] count   KEYS[2] lease   KEYS[3] the lease's wake list (<wake prefix> .. token)
-- ARGV[1] n   ARGV[2] ttl ms   ARGV[3] token   ARGV[4] restored value + n
-- (the caller checked that it does not overflow)   ARGV[5] wake list ttl ms
-- returns the counter's value after adding n (a string beyond 2^53)
local bad = check_types({KEYS[2], 'hash', 'cache counter lease', KEYS[3], 'list', 'cache counter wake list'}) or
  check_hint(KEYS[2], 'w', 'cache counter lease')
if bad then return bad end
local v
if redis.call('exists', KEYS[1]) == 1 then
  v = redis.pcall('incrby', KEYS[1], ARGV[1])
  if type(v) == 'table' then
    return check_int(KEYS[1], 'cache counter') or
      redis.error_reply('ERANGE ria counter ' .. KEYS[1] .. ' would overflow')
  end
  if v >= 2^53 or v <= -2^53 then
    v = redis.call('get', KEYS[1])
  end
else
  redis.call('set', KEYS[1], ARGV[4])
  v = ARGV[4]
end
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
