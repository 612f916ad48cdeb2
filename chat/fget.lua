-- fget.lua: a receiver reads chunk seq of a file, having finished every
-- chunk before it (process_logs_from_redis). Its position moves to seq
-- (byte offset off), or to last + 2 once it is answered end of file
-- (finished); chunks every receiver has finished are deleted, and the whole
-- file once every receiver has finished it. Positions only move forward,
-- and a run that answers end of file records it under KEYS[4] for the
-- client's retry window: a re-send of that call (its reply lost, the
-- transfer since deleted) answers end of file again. So {-1} to a reader
-- that opened the file means the transfer was deleted before that reader
-- finished it (its chat was deleted). The integer fields are checked
-- before the first write: canonical integers within 2^53, last >= 0,
-- size >= 0, 1 <= low <= last + 1, every pos:<receiver> in 1..last + 2,
-- and the chunks low..last stored (which bounds the deleting loop by what
-- is there).
-- KEYS[1] meta  KEYS[2] data  KEYS[3] files SET of the chat's file ids
-- KEYS[4] end-of-file record of this call
-- ARGV[1] receiver  ARGV[2] seq  ARGV[3] off  ARGV[4] file id
-- ARGV[5] record TTL in ms (0: none)
-- A reader asks for the chunk after the last it got; when the receiver's
-- position is past seq, another reader of the same receiver (another
-- device, or an older process still running) has read further, and the
-- chunks below that position may be deleted: a read of a chunk below it
-- is answered {-3} and writes nothing, never a chunk it does not have. A re-send of a read
-- finds the position it moved to (seq itself) and gets the same chunk.
-- returns {1, chunk}, {0} not written yet, {2} end of file,
-- {-1} no such transfer (or finished by every receiver), {-2} not a
-- receiver, {-3} the receiver's position is past seq (another reader)
local ttl = tonumber(ARGV[5])
if ttl > 0 and redis.call('GET', KEYS[4]) then return {2} end
local bad = check_types({KEYS[1], 'hash', 'chat file', KEYS[2], 'hash', 'chat file data', KEYS[3], 'set', 'chat files'})
if bad then return bad end
local own = 'pos:' .. ARGV[1]
local meta = redis.call('HGETALL', KEYS[1])
local f = {}
for i = 1, #meta, 2 do
  local k, v = meta[i], meta[i + 1]
  if (k == 'last' or k == 'low' or k == 'size' or string.sub(k, 1, 4) == 'pos:') and not is_count(v) then
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
local low0, size = tonumber(f['low']), tonumber(f['size'])
-- The ranges: a value out of them would have the loop below run for very
-- long or the state written wrong.
local function out_of_range(k, want)
  return key_error('CORRUPT', KEYS[1], 'chat file field ' .. k, string.format('%q', f[k]), want)
end
if last < 0 then return out_of_range('last', 'an integer >= 0') end
if size < 0 then return out_of_range('size', 'an integer >= 0') end
if low0 < 1 or low0 > last + 1 then return out_of_range('low', 'an integer in 1..last+1') end
for k, v in pairs(f) do
  if string.sub(k, 1, 4) == 'pos:' then
    local p = tonumber(v)
    if p < 1 or p > last + 2 then return out_of_range(k, 'an integer in 1..last+2') end
  end
end
if last - low0 + 1 > redis.call('HLEN', KEYS[2]) then
  return out_of_range('last', 'chunks low..last stored')
end
-- (Past the last chunk, a reader behind has read every chunk: it gets
-- end of file once the sender has marked it.)
if seq < pos and seq <= last then return {-3} end
-- Chunks low..last are stored, and low <= every position <= seq: a chunk
-- seq <= last is there unless the state is corrupt.
local chunk = nil
if seq <= last then
  chunk = redis.call('HGET', KEYS[2], seq)
  if not chunk then
    return key_error('CORRUPT', KEYS[2], 'chat file data', 'no chunk ' .. seq, 'chunks low..last of ' .. KEYS[1])
  end
end
local eof = f['eof'] == '1'
-- This run answers end of file: the receiver has finished (last + 2).
local done = eof and seq > last
local moved = done and last + 2 or seq
if moved > pos then
  redis.call('HSET', KEYS[1], own, moved, 'off:' .. ARGV[1], ARGV[3])
  f[own] = moved
end
local least = nil
for k, v in pairs(f) do
  if string.sub(k, 1, 4) == 'pos:' then
    local p = tonumber(v)
    if not least or p < least then least = p end
  end
end
-- Delete the chunks below every receiver's position.
local low = low0
local freed = 0
while low < least and low <= last do
  local c = redis.call('HGET', KEYS[2], low)
  if c then freed = freed + #c end
  redis.call('HDEL', KEYS[2], low)
  low = low + 1
end
if low ~= low0 then
  redis.call('HSET', KEYS[1], 'low', low, 'size', math.max(size - freed, 0))
end
if eof and least > last + 1 then
  redis.call('DEL', KEYS[1], KEYS[2])
  redis.call('SREM', KEYS[3], ARGV[4])
end
if chunk then return {1, chunk} end
if done then
  if ttl > 0 then redis.call('SET', KEYS[4], '2', 'PX', ttl) end
  return {2}
end
return {0}
