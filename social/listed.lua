-- listed.lua: the member's side of adding a user to a list: record the
-- list in the member's listed set, scored by the member's follower
-- sequence (fseq, shared with followers, which orders the fan-out passes),
-- and return the statuses posted since profile.lua read them. Naturally
-- idempotent: a re-send
-- finds the list there and changes nothing.
-- KEYS[1] member's user HASH   KEYS[2] its listed ZSET   KEYS[3] its profile ZSET
-- ARGV[1] "<owner>/<list>"   ARGV[2] timeline cap
-- ARGV[3] the score of the newest status the first step read (profile.lua),
--         or '-inf'
-- returns {0} no such user, else {1, added (0/1), id, score...}: the
-- statuses posted since the first step read the profile (score >= ARGV[3]),
-- newest first
local user, listed, profile = KEYS[1], KEYS[2], KEYS[3]
local bad = check_types({user, 'hash', 'social user', listed, 'zset', 'social listed',
  profile, 'zset', 'social profile timeline'})
if bad then return bad end
if redis.call('EXISTS', user) == 0 then return {0} end
bad = check_hint(user, 'fseq', 'social user')
if bad then return bad end
local added = 0
if not redis.call('ZSCORE', listed, ARGV[1]) then
  added = 1
  redis.call('ZADD', listed, redis.call('HINCRBY', user, 'fseq', 1), ARGV[1])
end
local out = {1, added}
local st = redis.call('ZREVRANGEBYSCORE', profile, '+inf', ARGV[3], 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
for i = 1, #st do out[#out + 1] = st[i] end
return out
