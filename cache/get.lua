-- get.lua: read a cache entry. On a miss, take the entry's lease (the caller
-- loads it) or, if another caller holds it, count the caller as a waiter.
-- On a hit due for refresh (within the refresh window of its TTL, or stale
-- within its grace), take the lease for a background reload if it is free.
-- Taking a lease empties the wake list, so that waiters of this lease only
-- see what its holder (or Set/Delete) pushes.
-- KEYS[1] val    STRING payload, PX ttl+grace
-- KEYS[2] lease  HASH t = holder's token, w = waits counted; PX lease
-- KEYS[3] wake   LIST, see store.lua
-- ARGV[1] token   ARGV[2] lease ms   ARGV[3] refresh window ms   ARGV[4] grace ms
-- ARGV[5] '1' when the caller could not decode ARGV[6], the payload it read:
--         drop the entry if it still holds that payload, and treat it as a miss
-- ARGV[7] '1' when the caller will wait if another holds the lease; '0' (a
--         background check) does not count as a waiter: no copy of the value
--         is pushed for it, and a failed refresh may keep its lease
-- returns {0, payload}     hit
--         {1, payload}     hit due for refresh: the caller took the lease
--         {2}              miss: the caller took the lease and loads
--         {3, lease pttl}  miss: another caller holds the lease; wait (counted
--                          as a waiter if ARGV[7] is '1')
local v = redis.call('get', KEYS[1])
if v and ARGV[5] == '1' and v == ARGV[6] then
  redis.call('del', KEYS[1])
  v = false
end
if v then
  local due = tonumber(ARGV[3]) + tonumber(ARGV[4])
  if due == 0 then
    return {0, v}
  end
  local pttl = redis.call('pttl', KEYS[1])
  if pttl < 0 or pttl > due or redis.call('exists', KEYS[2]) == 1 then
    return {0, v}
  end
  take_lease(KEYS[2], KEYS[3], ARGV[1], ARGV[2])
  return {1, v}
end
local pttl = redis.call('pttl', KEYS[2])
if pttl == -2 then
  take_lease(KEYS[2], KEYS[3], ARGV[1], ARGV[2])
  return {2}
end
if ARGV[7] == '1' then
  redis.call('hincrby', KEYS[2], 'w', 1)
end
return {3, pttl}
