-- deliver.lua: feed one status to one follower's home timeline (one step
-- of syndicate_status), sent pipelined (script.Send), one call per follower. It feeds
-- only a timeline whose owner still follows the author and that has no
-- tombstone for the status (a clean of the status ran first there), then
-- trims it. Naturally idempotent: a re-send (or a re-run of the fan-out
-- task) adds the same member with the same score.
-- KEYS[1] home ZSET   KEYS[2] following ZSET   KEYS[3] tombstones ZSET
-- ARGV[1] author's user ID   ARGV[2] status ID   ARGV[3] score   ARGV[4] cap
-- returns 1 fed, 0 skipped
local home, following, gone = KEYS[1], KEYS[2], KEYS[3]
local bad = check_types({home, 'zset', 'social home timeline', following, 'zset', 'social following', gone, 'zset', 'social tombstones'})
if bad then return bad end
if not redis.call('ZSCORE', following, ARGV[1]) then return 0 end
if redis.call('ZSCORE', gone, ARGV[2]) then return 0 end
redis.call('ZADD', home, ARGV[3], ARGV[2])
redis.call('ZREMRANGEBYRANK', home, 0, -tonumber(ARGV[4]) - 1)
return 1
