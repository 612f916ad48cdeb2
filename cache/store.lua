-- store.lua: store a cache entry (a loader's value, or Set's) and wake the
-- entry's waiters. A Set stores regardless and ends any lease: a load in
-- flight may have read older data, so its value will not be stored.
-- KEYS[1] val    STRING payload, PX ttl+grace
-- KEYS[2] lease  HASH t = holder's token, w = waits counted
-- KEYS[3] wake   LIST: 'v'..payload (the new value) or 'r' (look again); PX
--                ARGV[4]. Waiters rotate it (BLMOVE wake wake RIGHT LEFT), so
--                one push wakes them all.
-- ARGV[1] the caller's lease token, or '' to store regardless (Set)
-- ARGV[2] payload   ARGV[3] entry ttl ms (ttl+grace)   ARGV[4] wake list ttl ms
-- ARGV[5] largest payload (bytes) that travels in the wake list
-- returns 1 stored, 0 not stored: the lease is no longer the caller's
if ARGV[1] ~= '' and redis.call('hget', KEYS[2], 't') ~= ARGV[1] then
  return 0
end
redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3])
local w = tonumber(redis.call('hget', KEYS[2], 'w') or '0')
redis.call('del', KEYS[2])
if w > 0 then
  redis.call('del', KEYS[3])
  if string.len(ARGV[2]) <= tonumber(ARGV[5]) then
    redis.call('rpush', KEYS[3], 'v' .. ARGV[2])
  else
    redis.call('rpush', KEYS[3], 'r')
  end
  redis.call('pexpire', KEYS[3], ARGV[4])
end
return 1
