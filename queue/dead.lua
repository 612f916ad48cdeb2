-- dead.lua: list dead tasks, most recent first. (lib.lua is prepended.)
-- KEYS[1] dead ZSET   KEYS[2] tasks HASH (see lib.lua)
-- ARGV[1] offset   ARGV[2] limit (checked by the caller: their sum is small)
-- returns 6 fields per task: id, time of death (server Unix ms), queue,
--         task name, failed attempts, last error ('' for a field that is
--         missing or malformed)
local first = tonumber(ARGV[1])
local z = rd('zset', 'queue dead set', 'zrevrange', KEYS[1], first, first + tonumber(ARGV[2]) - 1, 'WITHSCORES')
need(KEYS[2], 'hash', 'queue tasks')
if BAD then return BAD end
local out = {}
for i = 1, #z, 2 do
  local id = z[i]
  local f = redis.call('hmget', KEYS[2], id, id .. ':a', id .. ':e')
  local q, name
  if f[1] then
    local m, c
    q, m, c, name = header(f[1])
  end
  out[#out + 1] = id
  out[#out + 1] = tonumber(z[i + 1])
  out[#out + 1] = q or ''
  out[#out + 1] = name or ''
  out[#out + 1] = f[2] or '0'
  out[#out + 1] = f[3] or ''
end
return out
