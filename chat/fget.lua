-- fget.lua: a receiver reads chunk seq of a file, having finished every
-- chunk before it (process_logs_from_redis). Its position moves to seq
-- (byte offset off); chunks every receiver has finished are deleted, and
-- the whole file once every receiver has reached its end. Naturally
-- idempotent: positions only move forward.
-- KEYS[1] meta  KEYS[2] data  KEYS[3] files SET of the chat's file ids
-- ARGV[1] receiver  ARGV[2] seq  ARGV[3] off  ARGV[4] file id
-- returns {1, chunk}, {0} not written yet, {2} end of file,
-- {-1} no such transfer (or finished by every receiver), {-2} not a receiver
local bad = check_types({KEYS[1], 'hash', 'chat file', KEYS[2], 'hash', 'chat file data', KEYS[3], 'set', 'chat files'})
if bad then return bad end
local m = redis.call('HGET', KEYS[1], 'last')
if not m then return {-1} end
local pos = redis.call('HGET', KEYS[1], 'pos:' .. ARGV[1])
if not pos then return {-2} end
local seq, last = tonumber(ARGV[2]), tonumber(m)
local eof = redis.call('HGET', KEYS[1], 'eof') == '1'
if seq > tonumber(pos) then
  redis.call('HSET', KEYS[1], 'pos:' .. ARGV[1], seq, 'off:' .. ARGV[1], ARGV[3])
end
-- Delete the chunks below every receiver's position.
local least = nil
local meta = redis.call('HGETALL', KEYS[1])
for i = 1, #meta, 2 do
  if string.sub(meta[i], 1, 4) == 'pos:' then
    local p = tonumber(meta[i + 1])
    if not least or p < least then least = p end
  end
end
local low = tonumber(redis.call('HGET', KEYS[1], 'low'))
local freed = 0
while low < least and low <= last do
  local c = redis.call('HGET', KEYS[2], low)
  if c then freed = freed + #c end
  redis.call('HDEL', KEYS[2], low)
  low = low + 1
end
if freed > 0 or low ~= tonumber(redis.call('HGET', KEYS[1], 'low')) then
  redis.call('HSET', KEYS[1], 'low', low)
  redis.call('HINCRBY', KEYS[1], 'size', -freed)
end
if eof and least > last then
  redis.call('DEL', KEYS[1], KEYS[2])
  redis.call('SREM', KEYS[3], ARGV[4])
end
if seq <= last then
  return {1, redis.call('HGET', KEYS[2], seq) or ''}
end
if eof then return {2} end
return {0}
