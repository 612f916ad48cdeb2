-- unread.lua: how many messages of one chat a member has not seen.
-- Read-only.
-- KEYS[1] members  KEYS[2] msgs (see create.lua)
-- ARGV[1] user
-- returns the count, -1 no such chat, -2 not a member
local bad = check_types({KEYS[1], 'zset', 'chat members', KEYS[2], 'zset', 'chat messages'})
if bad then return bad end
local seen = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not seen then
  if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
  return -2
end
return redis.call('ZCOUNT', KEYS[2], '(' .. seen, '+inf')
