-- fget.lua: a receiver reads chunk seq of a file, having finished every
-- chunk before it (process_logs_from_redis). Its position moves to seq
-- (byte offset off); chunks every receiver has finished are deleted, and
-- the whole file once every receiver has reached its end. Naturally
-- idempotent: positions only move forward. The integer fields (last, low,
-- size, every pos:<receiver>) are checked before the first write.
-- KEYS[1] meta  KEYS[2] data  KEYS[3] files SET of the chat's file ids
-- ARGV[1] receiver  ARGV[2] seq  ARGV[3] off  ARGV[4] file id
-- returns {1, chunk}, {0} not written yet, {2} end of file,
-- {-1} no such transfer (or finished by every receiver), {-2} not a receiver
local bad = check_types({KEYS[1], 'hash', 'chat file', KEYS[2], 'hash', 'chat file data', KEYS[3], 'set', 'chat files'})
if bad then return bad end
local own = 'pos:' .. ARGV[1]
local meta = redis.call('HGETALL', KEYS[1])
local f = {}
for i = 1, #meta, 2 do
  local k, v = meta[i], meta[i + 1]
  if (k == 'last' or k == 'low' or k == 'size' or string.sub(k, 1, 4) == 'pos:')
      and not string.match(v, '^%-?%d+$') then
    return key_error('CORRUPT', KEYS[1], 'chat file field ' .. k, string.format('%q', string.sub(v, 1, 40)), 'an integer')
  end
  f[k] = v
end
if not f['last'] then return {-1} end
if not f[own] then return {-2} end
for _, k in ipairs({'low', 'size'}) do
  if not f[k] then return key_error('CORRUPT', KEYS[1], 'chat file field ' .. k, 'none', 'an integer') end
end
local seq, last, pos = tonumber(ARGV[2]), tonumber(f['last']), tonumber(f[own])
local eof = f['eof'] == '1'
if seq > pos then
  redis.call('HSET', KEYS[1], own, seq, 'off:' .. ARGV[1], ARGV[3])
  f[own] = ARGV[2]
end
-- Delete the chunks below every receiver's position.
local least = nil
for k, v in pairs(f) do
  if string.sub(k, 1, 4) == 'pos:' then
    local p = tonumber(v)
    if not least or p < least then least = p end
  end
end
local low0 = tonumber(f['low'])
local low = low0
local freed = 0
while low < least and low <= last do
  local c = redis.call('HGET', KEYS[2], low)
  if c then freed = freed + #c end
  redis.call('HDEL', KEYS[2], low)
  low = low + 1
end
if low ~= low0 then
  redis.call('HSET', KEYS[1], 'low', low, 'size', tonumber(f['size']) - freed)
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
