-- send.lua: send a message to a chat (Redis in Action 6.5.2, send_message,
-- without the lock: the script is atomic). Run once per call
-- (script.NewOnce): a re-send gets the first reply, not a second message.
-- KEYS[1] members  KEYS[2] msgs  KEYS[3] ids (see create.lua)
-- ARGV[1] sender  ARGV[2] payload  ARGV[3] wake channel prefix
-- returns {1, id, ms} sent, {-1} no such chat, {-2} sender not a member
local bad = check_types({KEYS[1], 'zset', 'chat members', KEYS[2], 'zset', 'chat messages'})
if bad then return bad end
bad = check_ids(KEYS[3])
if bad then return bad end
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1} end
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return {-2} end
local r = send_msg(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3])
return {1, r[1], r[2]}
