-- leave.lua: remove user from a chat; delete the chat with its last member,
-- else trim the messages the remaining members have all seen (Redis in
-- Action 6.5.4, leave_chat). Naturally idempotent.
-- KEYS[1] members  KEYS[2] msgs  KEYS[3] ids (see create.lua)
-- ARGV[1] user
-- returns the members left
local bad = check_types({KEYS[1], 'zset', 'chat members', KEYS[2], 'zset', 'chat messages'})
if bad then return bad end
bad = check_int(KEYS[3], 'chat ids')
if bad then return bad end
redis.call('ZREM', KEYS[1], ARGV[1])
local left = redis.call('ZCARD', KEYS[1])
if left == 0 then
  redis.call('DEL', KEYS[2], KEYS[3])
else
  trim(KEYS[1], KEYS[2])
end
return left
