-- fput.lua: store chunk seq of a file, unless the chunks not yet read by
-- every receiver hold limit bytes or more (back-pressure: the sender
-- waits). Naturally idempotent: a chunk already stored is not stored again.
-- With ARGV[1] = 0 it marks the end of the file instead (run then as a
-- once-script, file.go's fendScript: every receiver may have read to the
-- end and deleted the transfer before a re-send of it). The fields last
-- and size are checked (canonical integers, 0 to 2^53) before the first
-- write: a loose one would drop chunks, keep the sender waiting for ever
-- or be written back wrong.
-- KEYS[1] meta HASH  KEYS[2] data HASH seq -> chunk
-- ARGV[1] seq (0: end of file)  ARGV[2] chunk  ARGV[3] limit in bytes
-- returns 1 stored, 0 full (try again), -1 no such transfer
local bad = check_types({KEYS[1], 'hash', 'chat file', KEYS[2], 'hash', 'chat file data'})
if bad then return bad end
local h = redis.call('HMGET', KEYS[1], 'last', 'size')
if not h[1] then return -1 end
for i, k in ipairs({'last', 'size'}) do
  local v = h[i]
  if not v or not is_count(v) or string.sub(v, 1, 1) == '-' then
    return key_error('CORRUPT', KEYS[1], 'chat file field ' .. k, v and string.format('%q', string.sub(v, 1, 40)) or 'none', 'an integer >= 0')
  end
end
local seq = tonumber(ARGV[1])
if seq == 0 then
  redis.call('HSET', KEYS[1], 'eof', 1)
  return 1
end
local last, size = tonumber(h[1]), tonumber(h[2])
if seq <= last then return 1 end
if size > 0 and size + #ARGV[2] > tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[2], seq, ARGV[2])
redis.call('HSET', KEYS[1], 'last', seq, 'size', size + #ARGV[2])
return 1
