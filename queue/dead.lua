-- dead.lua: list dead tasks, most recent first.
-- KEYS[1] dead ZSET   KEYS[2] tasks HASH (see common.lua)
-- ARGV[1] offset   ARGV[2] limit
-- returns 6 fields per task: id, time of death (server Unix ms), queue,
--         task name, failed attempts, last error
local out = {}
local first = tonumber(ARGV[1])
local z = redis.call('zrevrange', KEYS[1], first, first + tonumber(ARGV[2]) - 1, 'WITHSCORES')
for i = 1, #z, 2 do
  local id = z[i]
  local f = redis.call('hmget', KEYS[2], id .. ':q', id .. ':n', id .. ':a', id .. ':e')
  out[#out + 1] = id
  out[#out + 1] = tonumber(z[i + 1])
  out[#out + 1] = f[1] or ''
  out[#out + 1] = f[2] or ''
  out[#out + 1] = f[3] or '0'
  out[#out + 1] = f[4] or ''
end
return out
