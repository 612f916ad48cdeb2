-- create.lua: create a chat with its members and send its first message
-- (Redis in Action 6.5.1, create_chat). Run once per call (script.NewOnce):
-- a re-send gets the first reply. It publishes no wake-up: the chat is not
-- on the members' lists yet, so a woken Wait would fetch nothing; Create
-- publishes after adding it there (chat/ops.go).
-- KEYS[1] members ZSET member -> id of the last message they have seen
-- KEYS[2] msgs    ZSET packed message -> id
-- KEYS[3] ids     STRING last message id
-- ARGV[1] sender  ARGV[2] payload  ARGV[3..] members (the sender among them)
-- returns {1, id, ms} created, {-3} the chat exists
local bad = check_types({KEYS[1], 'zset', 'chat members', KEYS[2], 'zset', 'chat messages'})
if bad then return bad end
bad = check_ids(KEYS[3])
if bad then return bad end
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then return {-3} end
for i = 3, #ARGV do
  redis.call('ZADD', KEYS[1], 0, ARGV[i])
end
local r = send_msg(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], nil)
return {1, r[1], r[2]}
