-- unfollow.lua: the follower's side of an unfollow: remove the followed
-- user from its following, count it, and drop every status of that user
-- from its home timeline (status IDs start with the author's ID and ':').
-- A once-script: a re-send answers the same.
-- KEYS[1] follower's user HASH   KEYS[2] its following ZSET   KEYS[3] its home ZSET
-- ARGV[1] followed user's ID
-- returns 1 removed, 0 was not following but its statuses were dropped;
-- the error reply NOTFOLLOWING (nothing written, no record) if it was not
-- following and none of its statuses were there
local user, following, home = KEYS[1], KEYS[2], KEYS[3]
local bad = check_types({user, 'hash', 'social user', following, 'zset', 'social following',
  home, 'zset', 'social home timeline'})
if bad then return bad end
bad = check_hint(user, 'following', 'social user')
if bad then return bad end
local pre = ARGV[1] .. ':'
local drop = {}
for _, id in ipairs(redis.call('ZRANGE', home, 0, -1)) do
  if string.sub(id, 1, #pre) == pre then drop[#drop + 1] = id end
end
local removed = 0
if redis.call('ZSCORE', following, ARGV[1]) then
  removed = 1
elseif #drop == 0 then
  return redis.error_reply('NOTFOLLOWING social: not following')
end
redis.call('ZREM', following, ARGV[1])
if removed == 1 then redis.call('HINCRBY', user, 'following', -1) end
for i = 1, #drop, 1000 do
  redis.call('ZREM', home, unpack(drop, i, math.min(i + 999, #drop)))
end
return removed
