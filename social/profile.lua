-- profile.lua: read-only first step of a follow or of adding a user to a
-- list, in the followed user's slot: check the types of its keys (before
-- any slot is written, so that a key of another type refuses the call
-- having changed nothing) and read its recent statuses.
-- KEYS[1] followed user's HASH   KEYS[2] its followers (or listed) ZSET
-- KEYS[3] its profile ZSET
-- ARGV[1] timeline cap   ARGV[2] role of KEYS[2]
-- returns {0} no such user, else {1, deletes, id, score, id, score...}
-- newest first, where deletes counts the user's statuses deleted so far
-- (seq - posts: every post adds one to both, every delete takes one off
-- posts), for the third step to tell whether one was deleted since
local user, set, profile = KEYS[1], KEYS[2], KEYS[3]
local bad = check_types({user, 'hash', 'social user', set, 'zset', ARGV[2],
  profile, 'zset', 'social profile timeline'})
if bad then return bad end
if redis.call('EXISTS', user) == 0 then return {0} end
bad = check_hint(user, 'fseq', 'social user') or check_hint(user, 'followers', 'social user')
  or check_hint(user, 'seq', 'social user') or check_hint(user, 'posts', 'social user')
if bad then return bad end
local h = redis.call('HMGET', user, 'seq', 'posts')
local out = {1, tonumber(h[1] or '0') - tonumber(h[2] or '0')}
local st = redis.call('ZREVRANGE', profile, 0, tonumber(ARGV[1]) - 1, 'WITHSCORES')
for i = 1, #st do out[#out + 1] = st[i] end
return out
