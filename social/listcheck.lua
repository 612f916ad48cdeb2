-- listcheck.lua: read-only first step of adding a user to a list or
-- removing one, in the owner's slot: check the types of the owner's keys
-- before the member's side is written, so that a key of another type
-- refuses the call having changed nothing in either slot.
-- KEYS[1] owner's lists ZSET   KEYS[2] the list's members ZSET
-- KEYS[3] the list's timeline ZSET   KEYS[4] owner's tombstones ZSET
-- ARGV[1] list name
-- returns 1 the list exists, 0 it does not
local bad = check_types({KEYS[1], 'zset', 'social lists', KEYS[2], 'zset', 'social list members',
  KEYS[3], 'zset', 'social list timeline', KEYS[4], 'zset', 'social tombstones'})
if bad then return bad end
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 1 end
return 0
