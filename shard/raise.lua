-- raise.lua: raise the highest string number of a Records (the book keeps
-- the highest user id in location:max) so that a scan reads string ARGV[1].
-- KEYS[1] max STRING    ARGV[1] string number
-- returns the max after the call. Idempotent.
local bad = check_int(KEYS[1], 'shard records max')
if bad then return bad end
local m = tonumber(redis.call('get', KEYS[1]) or '-1')
local n = tonumber(ARGV[1])
if n > m then
  redis.call('set', KEYS[1], ARGV[1])
  m = n
end
return m
