-- clean.lua: remove one deleted status from one follower's home timeline
-- (one step of clean_timelines), sent pipelined, one call per follower,
-- and leave a tombstone there so that a fan-out of the status that comes
-- later (deliver.lua) skips it. Tombstones are capped at the timeline cap.
-- Naturally idempotent.
-- KEYS[1] home ZSET   KEYS[2] tombstones ZSET
-- (for a user list: KEYS[1] the list's timeline, KEYS[2] its owner's tombstones)
-- ARGV[1] status ID   ARGV[2] cap   ARGV[3] 'list' for a user list, else ''
-- returns 1 removed, 0 was not there
local home, gone = KEYS[1], KEYS[2]
local bad = check_types({home, 'zset', ARGV[3] == 'list' and 'social list timeline' or 'social home timeline', gone, 'zset', 'social tombstones'})
if bad then return bad end
local t = redis.call('TIME')
redis.call('ZADD', gone, t[1] * 1000 + math.floor(t[2] / 1000), ARGV[1])
redis.call('ZREMRANGEBYRANK', gone, 0, -tonumber(ARGV[2]) - 1)
return redis.call('ZREM', home, ARGV[1])
