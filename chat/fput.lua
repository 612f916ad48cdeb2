-- fput.lua: store chunk seq of a file, unless the chunks not yet read by
-- every receiver hold limit bytes or more (back-pressure: the sender
-- waits). Naturally idempotent: a chunk already stored is not stored again.
-- With ARGV[1] = 0 it marks the end of the file instead.
-- KEYS[1] meta HASH  KEYS[2] data HASH seq -> chunk
-- ARGV[1] seq (0: end of file)  ARGV[2] chunk  ARGV[3] limit in bytes
-- returns 1 stored, 0 full (try again), -1 no such transfer
local bad = check_types({KEYS[1], 'hash', 'chat file', KEYS[2], 'hash', 'chat file data'})
if bad then return bad end
local last = redis.call('HGET', KEYS[1], 'last')
if not last then return -1 end
local seq = tonumber(ARGV[1])
if seq == 0 then
  redis.call('HSET', KEYS[1], 'eof', 1)
  return 1
end
if seq <= tonumber(last) then return 1 end
local size = tonumber(redis.call('HGET', KEYS[1], 'size'))
if size > 0 and size + #ARGV[2] > tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[2], seq, ARGV[2])
redis.call('HSET', KEYS[1], 'last', seq, 'size', size + #ARGV[2])
return 1
