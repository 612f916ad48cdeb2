-- incr.lua: add to a counter that exists; if it is missing (expired,
-- evicted, flushed), take its restore lease so that the caller restores it
-- from the system of record, or register the caller as a waiter of the
-- caller that restores it. Incr runs it as a once-script (a re-send is
-- answered from the first run's record); Get (n = 0) as a plain one, which
-- is naturally idempotent: INCRBY 0, and a lease that names the caller.
-- KEYS[1] count  STRING integer, PX ttl from its last use
-- KEYS[2] lease  HASH t = restorer's token, w = waiters registered; PX lease
-- KEYS[3] wake list prefix: <prefix>{N:K}:count.wake: (a LIST per token)
-- ARGV[1] n   ARGV[2] ttl ms   ARGV[3] token, or '' when nothing restores
--         counters (a missing one starts from 0)   ARGV[4] lease ms
-- returns {0, value after adding n} (a string beyond 2^53, which Lua's
--                                    numbers do not hold exactly)
--         {2}                 missing: the caller holds the lease and restores
--         {3, pttl, token}    missing: the restorer holds it; wait on
--                             <wake prefix> .. token, up to pttl ms
-- errors: the counter is not an integer (CORRUPT), a key of another type
--         (WRONGTYPE), or the sum would overflow (ERANGE): nothing written.
if ARGV[3] == '' or redis.call('exists', KEYS[1]) == 1 then
  -- INCRBY checks the type and the value and writes only if both are fine.
  local v = redis.pcall('incrby', KEYS[1], ARGV[1])
  if type(v) == 'table' then
    return check_int(KEYS[1], 'cache counter') or
      redis.error_reply('ERANGE ria counter ' .. KEYS[1] .. ' would overflow')
  end
  redis.call('pexpire', KEYS[1], ARGV[2])
  if v >= 2^53 or v <= -2^53 then
    v = redis.call('get', KEYS[1])
  end
  return {0, v}
end
local bad = check_types({KEYS[2], 'hash', 'cache counter lease'}) or
  check_hint(KEYS[2], 'w', 'cache counter lease')
if bad then return bad end
local t = redis.call('hget', KEYS[2], 't')
if t == ARGV[3] then return {2} end
if not t then
  redis.call('hset', KEYS[2], 't', ARGV[3], 'w', 0)
  redis.call('pexpire', KEYS[2], ARGV[4])
  return {2}
end
bad = check_types({KEYS[3] .. t, 'list', 'cache counter wake list'})
if bad then return bad end
redis.call('hincrby', KEYS[2], 'w', 1)
return {3, redis.call('pttl', KEYS[2]), t}
