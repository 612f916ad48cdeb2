-- bounds.lua: what a fan-out task on one server needs to feed its batch
-- (feed.lua reads the targets itself): whether the status exists, and the
-- follower sequence numbers that end the batch's calls, found by rank
-- (O(log n) each) instead of reading the batch. Read-only.
-- KEYS[1] status HASH   KEYS[2] author's followers ZSET   KEYS[3] author's
-- listed ZSET
-- ARGV[1] the last sequence number fed (the batch starts after it)
-- ARGV[2] the batch size   ARGV[3] targets per call
-- returns {0} the status is gone; {-1} lists hold entries in the batch's
-- range (the caller reads the batch instead: lists and followers share the
-- sequence, so ranks in followers alone do not count them); else {1, more
-- (0/1), the sequence number of every ARGV[3]-th target of the batch and
-- of its last}
if redis.call('EXISTS', KEYS[1]) == 0 then return {0} end
local bad = check_types({KEYS[2], 'zset', 'social followers', KEYS[3], 'zset', 'social listed'})
if bad then return bad end
if redis.call('ZCOUNT', KEYS[3], '(' .. ARGV[1], '+inf') > 0 then return {-1} end
local before = redis.call('ZCOUNT', KEYS[2], '-inf', ARGV[1])
local left = redis.call('ZCARD', KEYS[2]) - before
local size, step = tonumber(ARGV[2]), tonumber(ARGV[3])
local n = math.min(left, size)
return rank_ends(KEYS[2], before, n, step, {1, left > size and 1 or 0})
