-- unfollowed.lua: the followed user's side of an unfollow: remove the
-- follower and count it. Naturally idempotent.
-- KEYS[1] followed user's HASH   KEYS[2] its followers ZSET
-- ARGV[1] follower's user ID
-- returns 1 removed, 0 was not there
local user, followers = KEYS[1], KEYS[2]
local bad = check_types({user, 'hash', 'social user', followers, 'zset', 'social followers'})
if bad then return bad end
bad = check_hint(user, 'followers', 'social user')
if bad then return bad end
if redis.call('ZREM', followers, ARGV[1]) == 0 then return 0 end
redis.call('HINCRBY', user, 'followers', -1)
return 1
