-- follow.lua: the follower's side of a follow: add the followed user to
-- its following (scored by server time in ms), count it, and copy the
-- followed user's recent statuses (read by followed.lua) into its home
-- timeline, then trim it. A once-script: a re-send answers the same.
-- KEYS[1] follower's user HASH   KEYS[2] its following ZSET
-- KEYS[3] its home ZSET   KEYS[4] its deleted-status tombstones ZSET
-- ARGV[1] followed user's ID   ARGV[2] timeline cap
-- ARGV[3..] status ID, score pairs
-- returns 1 added, 0 was already following; the error reply NOUSER
-- (nothing written) if there is no such user
local user, following, home, gone = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local bad = check_types({user, 'hash', 'social user', following, 'zset', 'social following',
  home, 'zset', 'social home timeline', gone, 'zset', 'social tombstones'})
if bad then return bad end
if redis.call('EXISTS', user) == 0 then return redis.error_reply('NOUSER social: no such user') end
bad = check_hint(user, 'following', 'social user')
if bad then return bad end
local added = 0
if not redis.call('ZSCORE', following, ARGV[1]) then
  added = 1
  local t = redis.call('TIME')
  redis.call('ZADD', following, t[1] * 1000 + math.floor(t[2] / 1000), ARGV[1])
  redis.call('HINCRBY', user, 'following', 1)
end
for i = 3, #ARGV, 2 do
  if not redis.call('ZSCORE', gone, ARGV[i]) then
    redis.call('ZADD', home, ARGV[i + 1], ARGV[i])
  end
end
redis.call('ZREMRANGEBYRANK', home, 0, -tonumber(ARGV[2]) - 1)
return added
