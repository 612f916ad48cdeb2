-- join.lua: add user to a chat, having seen every message sent so far
-- (Redis in Action 6.5.4, join_chat). Run once per call (script.NewOnce):
-- a re-send gets the first reply and writes nothing, so it cannot undo a
-- Leave of the same user made since. Every refusal comes before the first
-- write. A member who joins again (a new call) keeps their seen id and is
-- answered 0, even when the chat is full.
-- KEYS[1] members  KEYS[2] ids (see create.lua)
-- ARGV[1] user  ARGV[2] most members
-- returns 1 joined, 0 already a member, -1 no such chat, -2 chat full
local bad = check_types({KEYS[1], 'zset', 'chat members'})
if bad then return bad end
bad = check_ids(KEYS[2])
if bad then return bad end
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return -2 end
local last = redis.call('GET', KEYS[2]) or '0'
return redis.call('ZADD', KEYS[1], 'NX', last, ARGV[1])
