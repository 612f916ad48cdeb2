-- fopen.lua: start a file transfer in a chat (Redis in Action 6.6,
-- copy_logs_to_redis) and announce it: the receivers are the members but
-- the sender, each at chunk 1, byte 0, and the announcement is a message
-- of the sender (send_msg, lib.lua), in the same script, so a refused call
-- writes nothing and a transfer is never left unannounced. Run once per
-- call (script.NewOnce): a re-send gets the first reply, not a second
-- message.
-- KEYS[1] members  KEYS[2] msgs  KEYS[3] ids (see create.lua)
-- KEYS[4] files SET of file ids  KEYS[5] meta HASH
-- ARGV[1] sender  ARGV[2] file id  ARGV[3] name  ARGV[4] announcement payload
-- ARGV[5] wake channel prefix
-- returns {n, id, ms}: n receivers, the announcement's id and time;
-- {0} no other member, {-1} no such chat, {-2} sender not a member,
-- {-3} opened already (by an earlier run of this call)
local bad = check_types({KEYS[1], 'zset', 'chat members', KEYS[2], 'zset', 'chat messages',
  KEYS[4], 'set', 'chat files', KEYS[5], 'hash', 'chat file'})
if bad then return bad end
bad = check_ids(KEYS[3])
if bad then return bad end
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1} end
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return {-2} end
-- The file id is new per call: a transfer under it was opened by an
-- earlier run of this call whose record is gone (none kept).
if redis.call('EXISTS', KEYS[5]) == 1 then return {-3} end
local n = redis.call('ZCARD', KEYS[1]) - 1
if n == 0 then return {0} end
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if m ~= ARGV[1] then
    redis.call('HSET', KEYS[5], 'pos:' .. m, 1, 'off:' .. m, 0)
  end
end
redis.call('HSET', KEYS[5], 'name', ARGV[3], 'last', 0, 'low', 1, 'size', 0, 'eof', 0, 'n', n)
redis.call('SADD', KEYS[4], ARGV[2])
local r = send_msg(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[4], ARGV[5])
return {n, r[1], r[2]}
