-- rwextend.lua: reset the lease of the caller's hold on the read/write
-- lock to ARGV[3] ms if it still holds it in mode ARGV[2]. A re-run after
-- a lost reply extends again and answers the same. (check_types comes from
-- internal/script's check.lua.)
-- KEYS[1] writer   STRING token of the writer, PX ttl
-- KEYS[2] readers  ZSET reader token -> deadline (server ms)
-- ARGV[1] token   ARGV[2] mode 'r' or 'w'   ARGV[3] ttl ms
-- returns 1 extended, 0 not held
local writer, readers = KEYS[1], KEYS[2]
local token, mode, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3])
local bad = check_types({writer, 'string', 'lock rw writer', readers, 'zset', 'lock rw readers'})
if bad then return bad end
if mode == 'w' then
  if redis.call('get', writer) ~= token then return 0 end
  return redis.call('pexpire', writer, ttl)
end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local s = redis.call('zscore', readers, token)
if not s or tonumber(s) <= now then return 0 end
redis.call('zadd', readers, 'xx', string.format('%d', now + ttl), token)
if redis.call('pttl', readers) < ttl then redis.call('pexpire', readers, ttl) end
return 1
