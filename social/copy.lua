-- copy.lua: last step of a follow or of adding a user to a list, run only
-- when the followed user posted between the first step and the third:
-- copy those statuses into the home (or list) timeline if its owner still
-- follows the author (or the list still holds it), skipping tombstones,
-- then trim. Naturally idempotent.
-- KEYS[1] home (list) timeline ZSET   KEYS[2] following (list members) ZSET
-- KEYS[3] tombstones ZSET
-- ARGV[1] author's user ID   ARGV[2] cap   ARGV[3] 'list' for a user list, else ''
-- ARGV[4..] status ID, score pairs
-- returns how many were added
local home, following, gone = KEYS[1], KEYS[2], KEYS[3]
local tl, fl = 'social home timeline', 'social following'
if ARGV[3] == 'list' then tl, fl = 'social list timeline', 'social list members' end
local bad = check_types({home, 'zset', tl, following, 'zset', fl, gone, 'zset', 'social tombstones'})
if bad then return bad end
if not redis.call('ZSCORE', following, ARGV[1]) then return 0 end
local added = 0
for i = 4, #ARGV, 2 do
  if not redis.call('ZSCORE', gone, ARGV[i]) then
    added = added + redis.call('ZADD', home, ARGV[i + 1], ARGV[i])
  end
end
redis.call('ZREMRANGEBYRANK', home, 0, -tonumber(ARGV[2]) - 1)
return added
