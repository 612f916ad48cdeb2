-- fopen.lua: start a file transfer in a chat (Redis in Action 6.6,
-- copy_logs_to_redis): the receivers are the members but the sender, each
-- at chunk 1, byte 0. Naturally idempotent (the file id is new per call).
-- KEYS[1] members  KEYS[2] files SET of file ids  KEYS[3] meta HASH
-- ARGV[1] sender  ARGV[2] file id  ARGV[3] name
-- returns the number of receivers, -1 no such chat, -2 sender not a member
local bad = check_types({KEYS[1], 'zset', 'chat members', KEYS[2], 'set', 'chat files', KEYS[3], 'hash', 'chat file'})
if bad then return bad end
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return -2 end
if redis.call('EXISTS', KEYS[3]) == 1 then return tonumber(redis.call('HGET', KEYS[3], 'n')) end
local n = 0
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if m ~= ARGV[1] then
    redis.call('HSET', KEYS[3], 'pos:' .. m, 1, 'off:' .. m, 0)
    n = n + 1
  end
end
if n == 0 then return 0 end
redis.call('HSET', KEYS[3], 'name', ARGV[3], 'last', 0, 'low', 1, 'size', 0, 'eof', 0, 'n', n)
redis.call('SADD', KEYS[2], ARGV[2])
return n
