-- deliver.lua: feed one status to one follower's home timeline (one step
-- of syndicate_status), sent pipelined (script.Send), one call per follower. It feeds
-- only a timeline whose owner still follows the author and that has no
-- tombstone for the status (a clean of the status ran first there), then
-- trims it. Naturally idempotent: a re-send (or a re-run of the fan-out
-- task) adds the same member with the same score.
-- KEYS[1] home ZSET   KEYS[2] following ZSET   KEYS[3] tombstones ZSET
-- (for a user list: KEYS[1] the list's timeline, KEYS[2] its members, KEYS[3]
-- its owner's tombstones)
-- ARGV[1] author's user ID   ARGV[2] status ID   ARGV[3] score   ARGV[4] cap
-- ARGV[5] 'list' for a user list, else 
-- returns 1 fed, 0 skipped
local home, following, gone = KEYS[1], KEYS[2], KEYS[3]
local tl, fl = 'social home timeline', 'social following'
if ARGV[5] == 'list' then tl, fl = 'social list timeline', 'social list members' end
local bad = check_types({home, 'zset', tl, following, 'zset', fl, gone, 'zset', 'social tombstones'})
if bad then return bad end
if ARGV[5] ~= 'list' and tonumber(ARGV[6]) > 0 then
  bad = check_types({KEYS[4], 'hash', 'social user'}) or check_hint(KEYS[4], 'seen', 'social user')
    or check_hint(KEYS[4], 'signup', 'social user')
  if bad then return bad end
  local h = redis.call('HMGET', KEYS[4], 'idle', 'seen', 'signup')
  if h[1] == '1' then return 0 end
  local t = redis.call('TIME')
  local seen = tonumber(h[2] or h[3] or '0')
  if not h[1] and t[1] * 1000 + math.floor(t[2] / 1000) - seen > tonumber(ARGV[6]) then
    redis.call('HSET', KEYS[4], 'idle', 1)
    redis.call('DEL', home)
    return 0
  end
end
if not redis.call('ZSCORE', following, ARGV[1]) then return 0 end
if redis.call('ZSCORE', gone, ARGV[2]) then return 0 end
redis.call('ZADD', home, ARGV[3], ARGV[2])
redis.call('ZREMRANGEBYRANK', home, 0, -tonumber(ARGV[4]) - 1)
return 1
