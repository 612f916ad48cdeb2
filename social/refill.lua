-- refill.lua: add statuses read from followed users' profiles to a home
-- timeline (refill_timeline), keeping only those whose author is still
-- followed and that were not deleted, then trim. Naturally idempotent.
-- KEYS[1] following ZSET   KEYS[2] home ZSET   KEYS[3] tombstones ZSET
-- ARGV[1] timeline cap   ARGV[2..] author, status ID, score triples
-- returns the home timeline's length
local following, home, gone = KEYS[1], KEYS[2], KEYS[3]
local bad = check_types({following, 'zset', 'social following', home, 'zset', 'social home timeline',
  gone, 'zset', 'social tombstones'})
if bad then return bad end
for i = 2, #ARGV, 3 do
  if redis.call('ZSCORE', following, ARGV[i]) and not redis.call('ZSCORE', gone, ARGV[i + 1]) then
    redis.call('ZADD', home, ARGV[i + 2], ARGV[i + 1])
  end
end
redis.call('ZREMRANGEBYRANK', home, 0, -tonumber(ARGV[1]) - 1)
return redis.call('ZCARD', home)
