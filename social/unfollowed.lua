-- unfollowed.lua: the followed user's side of an unfollow: remove the
-- follower and count it. A once-script (record in the followed user's
-- slot): a re-send answers the same and changes nothing, even after a
-- Follow added the follower back meanwhile. It fails before its first
-- write (an error reply is not recorded) on a bad key, and when the
-- follower is not there, so that an Unfollow of a user one does not
-- follow writes nothing, not even a record.
-- KEYS[1] followed user's HASH   KEYS[2] its followers ZSET
-- ARGV[1] follower's user ID
-- returns 1 removed; the error reply NOTFOLLOWING (nothing written, no
-- record) if the follower was not there: the caller goes on to the
-- follower's side (unfollow.lua), which may still hold the followed user
local user, followers = KEYS[1], KEYS[2]
local bad = check_types({user, 'hash', 'social user', followers, 'zset', 'social followers'})
if bad then return bad end
bad = check_hint(user, 'followers', 'social user')
if bad then return bad end
if not redis.call('ZSCORE', followers, ARGV[1]) then
  return redis.error_reply('NOTFOLLOWING social: not a follower')
end
redis.call('ZREM', followers, ARGV[1])
redis.call('HINCRBY', user, 'followers', -1)
return 1
