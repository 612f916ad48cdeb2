-- followed.lua: the followed user's side of a follow: add the follower to
-- its followers (scored by a sequence of its own, which orders the fan-out
-- passes) and count it; return the statuses posted since profile.lua
-- read them. A once-script (record in the followed user's slot): a
-- re-send answers the same and changes nothing, even after another
-- process saw the follower there and an Unfollow removed it (a plain
-- re-send would add it back). The checks fail before the first write (an
-- error reply is not recorded).
-- KEYS[1] followed user's HASH   KEYS[2] its followers ZSET
-- KEYS[3] its profile ZSET
-- ARGV[1] follower's user ID   ARGV[2] timeline cap
-- ARGV[3] the score of the newest status the first step read (profile.lua),
--         or '-inf'
-- ARGV[4] the deletes count the first step read   ARGV[5] the score of
--         the oldest status it read, or '' if none
-- returns {0} no such user, else {1, added (0/1), id, score...}: the
-- statuses posted since the first step read the profile (score >= ARGV[3]),
-- newest first; then, only if a status of the user was deleted since the
-- first step (its deletes count moved), '*' and the IDs now in the profile
-- with a score >= ARGV[5]: the caller removes from the timeline those the
-- first step read that are no longer there
local user, followers, profile = KEYS[1], KEYS[2], KEYS[3]
local bad = check_types({user, 'hash', 'social user', followers, 'zset', 'social followers',
  profile, 'zset', 'social profile timeline'})
if bad then return bad end
if redis.call('EXISTS', user) == 0 then return {0} end
bad = check_hint(user, 'fseq', 'social user') or check_hint(user, 'followers', 'social user')
  or check_hint(user, 'seq', 'social user') or check_hint(user, 'posts', 'social user')
if bad then return bad end
local added = 0
if not redis.call('ZSCORE', followers, ARGV[1]) then
  added = 1
  local seq = redis.call('HINCRBY', user, 'fseq', 1)
  redis.call('ZADD', followers, seq, ARGV[1])
  redis.call('HINCRBY', user, 'followers', 1)
end
local out = {1, added}
local st = redis.call('ZREVRANGEBYSCORE', profile, '+inf', ARGV[3], 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
for i = 1, #st do out[#out + 1] = st[i] end
if ARGV[5] ~= '' then
  local h = redis.call('HMGET', user, 'seq', 'posts')
  if tonumber(h[1] or '0') - tonumber(h[2] or '0') ~= tonumber(ARGV[4]) then
    out[#out + 1] = '*'
    for _, id in ipairs(redis.call('ZRANGEBYSCORE', profile, ARGV[5], '+inf')) do out[#out + 1] = id end
  end
end
return out
