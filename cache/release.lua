-- release.lua: give a lease back, or delete an entry.
--   'l' a loader that failed: delete its marker (if still there), and tell
--       the waiters registered on it to look again ('r'): one takes over.
--   'r' a background refresher that failed: end its refresh lease, or keep
--       it ARGV[4] ms (a failing loader is then not called on every Get).
--   'd' Delete: delete the entry, whatever it holds, and any refresh lease;
--       waiters of a marker it held look again and one of them loads.
-- Naturally idempotent: a re-send finds nothing left to do.
-- KEYS[1] val   KEYS[2] refresh lease   KEYS[3] wake list prefix (see store.lua)
-- ARGV[1] mode   ARGV[2] the caller's token ('d': unused)   ARGV[3] wake list ttl ms
-- ARGV[4] 'r': hold ms   ARGV[5] '1' when the cache refreshes in the background
-- ARGV[6] 'd': near cache invalidation channel ('' or absent: publish nothing)
-- ARGV[7] 'd': its message, PUBLISHed whether or not there was an entry
-- returns 1 done, 0 the lease was not the caller's
local cur, bad = read(KEYS[1], 'cache entry')
if bad then return bad end
local held = false
if ARGV[5] == '1' then
  held, bad = read(KEYS[2], 'cache refresh lease')
  if bad then return bad end
end
if ARGV[1] == 'r' then
  if held ~= ARGV[2] then return 0 end
  if tonumber(ARGV[4]) > 0 then
    redis.call('pexpire', KEYS[2], ARGV[4])
  else
    redis.call('del', KEYS[2])
  end
  return 1
end
local tok, waited = lease_of(cur)
if ARGV[1] == 'l' and tok ~= ARGV[2] then return 0 end
local list
if waited then
  list = KEYS[3] .. tok
  bad = check_types({list, 'list', 'cache wake list'})
  if bad then return bad end
end
if cur then
  redis.call('del', KEYS[1])
end
if ARGV[1] == 'd' and held then
  redis.call('del', KEYS[2])
end
if list then
  wake(list, 'r', ARGV[3])
end
if ARGV[1] == 'd' then
  invalidate(ARGV[6], ARGV[7])
end
return 1
