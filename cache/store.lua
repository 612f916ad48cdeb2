-- store.lua: store a Cache entry's value: a loader's (it must still hold
-- the lease its marker names), a background refresher's (it must still hold
-- the refresh lease) or a Set's (regardless). The store ends any refresh in
-- flight, and if the entry held a marker a waiter registered on, it hands
-- the value to that lease's waiters ('v' .. payload, or 'r' "read it" when
-- it is larger than ARGV[6]). Naturally idempotent: a re-sent store finds
-- its own payload and answers 1 again, and wakes nobody twice.
-- KEYS[1] val    STRING payload PX ttl+grace, or a lease marker PX lease
-- KEYS[2] lease  STRING token of the background refresher, PX lease (used
--                only when ARGV[7] is '1')
-- KEYS[3] wake list prefix: <prefix>{N:K}:wake: (a LIST per lease token)
-- ARGV[1] 'l' loader, 'r' refresher, 's' Set   ARGV[2] the caller's token
-- ARGV[3] payload   ARGV[4] entry ttl ms   ARGV[5] wake list ttl ms
-- ARGV[6] largest payload that travels in a wake list
-- ARGV[7] '1' when the cache refreshes in the background (refresh or grace)
-- ARGV[8] near cache invalidation channel ('' or absent: publish nothing)
-- ARGV[9] its message (the writer's origin id .. key), PUBLISHed after the write
-- returns 1 stored, 0 not stored: the lease is no longer the caller's
local cur, bad = read(KEYS[1], 'cache entry')
if bad then return bad end
local held = false
if ARGV[7] == '1' then
  held, bad = read(KEYS[2], 'cache refresh lease')
  if bad then return bad end
end
local tok, waited = lease_of(cur)
if (ARGV[1] == 'l' and tok ~= ARGV[2]) or (ARGV[1] == 'r' and held ~= ARGV[2]) then
  if cur == ARGV[3] then return 1 end
  return 0
end
local list
if waited then
  list = KEYS[3] .. tok
  bad = check_types({list, 'list', 'cache wake list'})
  if bad then return bad end
end
redis.call('set', KEYS[1], ARGV[3], 'px', ARGV[4])
if held then
  redis.call('del', KEYS[2])
end
if list then
  if string.len(ARGV[3]) <= tonumber(ARGV[6]) then
    wake(list, 'v' .. ARGV[3], ARGV[5])
  else
    wake(list, 'r', ARGV[5])
  end
end
invalidate(ARGV[8], ARGV[9])
return 1
