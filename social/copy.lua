-- copy.lua: last step of a follow or of adding a user to a list, run only
-- when the followed user posted or deleted statuses between the first step
-- and the third: remove the statuses the second step copied that the
-- third found gone from the profile (deleted: a clean may have missed
-- this timeline), leaving a tombstone as clean.lua does; then copy the
-- statuses posted meanwhile into the home (or list) timeline if its owner
-- still follows the author (or the list still holds it), skipping
-- tombstones, and trim. Tombstones are kept and dropped by age, as
-- clean.lua keeps them. Naturally idempotent.
-- KEYS[1] home (list) timeline ZSET   KEYS[2] following (list members) ZSET
-- KEYS[3] tombstones ZSET
-- ARGV[1] author's user ID   ARGV[2] cap   ARGV[3] 'list' for a user list, else ''
-- ARGV[4] tombstone TTL (ms)
-- ARGV[5] n   ARGV[6..5+2n] status ID, score pairs to copy
-- ARGV[6+2n..] status IDs to remove
-- returns how many were added
local home, following, gone = KEYS[1], KEYS[2], KEYS[3]
local tl, fl = 'social home timeline', 'social following'
if ARGV[3] == 'list' then tl, fl = 'social list timeline', 'social list members' end
local bad = check_types({home, 'zset', tl, following, 'zset', fl, gone, 'zset', 'social tombstones'})
if bad then return bad end
local cap, ttl, n = tonumber(ARGV[2]), tonumber(ARGV[4]), tonumber(ARGV[5])
if #ARGV > 5 + 2 * n then
  local t = redis.call('TIME')
  local now = t[1] * 1000 + math.floor(t[2] / 1000)
  for i = 6 + 2 * n, #ARGV do
    redis.call('ZADD', gone, now, ARGV[i])
    redis.call('ZREM', home, ARGV[i])
  end
  redis.call('ZREMRANGEBYSCORE', gone, '-inf', '(' .. string.format('%d', now - ttl))
  redis.call('PEXPIRE', gone, ttl)
end
if not redis.call('ZSCORE', following, ARGV[1]) then return 0 end
local added = 0
for i = 6, 5 + 2 * n, 2 do
  if not redis.call('ZSCORE', gone, ARGV[i]) then
    added = added + redis.call('ZADD', home, ARGV[i + 1], ARGV[i])
  end
end
redis.call('ZREMRANGEBYRANK', home, 0, -cap - 1)
return added
