-- precheck.lua: read-only first step of a follow or unfollow, in the
-- follower's slot: check the types of the follower's keys before the
-- followed user's side is written, so that a key of another type refuses
-- the call having changed nothing in either slot.
-- KEYS[1] follower's user HASH   KEYS[2] its following ZSET
-- KEYS[3] its home ZSET   KEYS[4] its tombstones ZSET
-- returns 1 the user exists, 0 it does not
local bad = check_types({KEYS[1], 'hash', 'social user', KEYS[2], 'zset', 'social following',
  KEYS[3], 'zset', 'social home timeline', KEYS[4], 'zset', 'social tombstones'})
if bad then return bad end
bad = check_hint(KEYS[1], 'following', 'social user')
if bad then return bad end
return redis.call('EXISTS', KEYS[1])
