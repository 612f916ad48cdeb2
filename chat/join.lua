-- join.lua: add user to a chat, having seen every message sent so far
-- (Redis in Action 6.5.4, join_chat). Naturally idempotent: a member who
-- joins again keeps their seen id.
-- KEYS[1] members  KEYS[2] ids (see create.lua)
-- ARGV[1] user
-- returns 1 joined, 0 already a member, -1 no such chat
local bad = check_types({KEYS[1], 'zset', 'chat members'})
if bad then return bad end
bad = check_int(KEYS[2], 'chat ids')
if bad then return bad end
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local last = redis.call('GET', KEYS[2]) or '0'
return redis.call('ZADD', KEYS[1], 'NX', last, ARGV[1])
