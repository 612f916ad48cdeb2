-- grouppage.lua: one page of a group's article IDs in score or time order
-- (Redis in Action 1.3.2, get_group_articles). The group's order is cached
-- in a ZSET for a short TTL and computed only when missing. Naturally
-- idempotent: a re-send finds the cache its first run filled.
-- KEYS[1] cache  ZSET group ∩ order, expiring after ARGV[1] ms
-- KEYS[2] group  SET of article IDs
-- KEYS[3] order  ZSET (score or time) of every article of the site
-- ARGV[1] cache TTL (ms)   ARGV[2] first rank   ARGV[3] last rank
-- ARGV[4] the role of KEYS[3] in errors ('voting score index' or
-- 'voting time index')
-- returns the IDs ranked ARGV[2]..ARGV[3], highest first
-- WEIGHTS 0 1 gives each member exactly its score in KEYS[3] (the book's
-- AGGREGATE MAX would give 1 to any score below 1).
local cache, group, order = KEYS[1], KEYS[2], KEYS[3]
local bad = check_types({cache, 'zset', 'voting group cache', group, 'set', 'voting group', order, 'zset', ARGV[4]})
if bad then return bad end
if redis.call('EXISTS', cache) == 0 then
  if redis.call('ZINTERSTORE', cache, 2, group, order, 'WEIGHTS', 0, 1) > 0 then
    redis.call('PEXPIRE', cache, ARGV[1])
  else
    redis.call('DEL', cache) -- Redis stores no empty set; some servers do
    return {}
  end
end
return redis.call('ZREVRANGE', cache, ARGV[2], ARGV[3])
