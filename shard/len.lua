-- len.lua: the length of a sharded list (book 11.4, sharded_llen): the sum
-- of its shards' lengths, first to last. Read only.
-- KEYS[1] first STRING   KEYS[2] last STRING   KEYS[3] shard prefix
-- returns the length
-- The ends are shard numbers, which no push takes anywhere near ±2^52:
-- one beyond 2^53 would be read as the nearest double, another shard, and
-- near 2^53 a step to the next shard would not move (a loop over shards
-- would not end).
local function check_end(key, role)
  local v = redis.call('get', key)
  if v and not (is_count(v) and math.abs(tonumber(v)) < 4503599627370496) then
    return key_error('CORRUPT', key, role, string.format('%q', string.sub(v, 1, 40)), 'an integer within ±2^52')
  end
end
local bad = check_int(KEYS[1], 'shard list first') or check_int(KEYS[2], 'shard list last')
  or check_end(KEYS[1], 'shard list first') or check_end(KEYS[2], 'shard list last')
if bad then return bad end
local first = tonumber(redis.call('get', KEYS[1]) or '0')
local last = tonumber(redis.call('get', KEYS[2]) or '0')
local n = 0
for s = first, last do
  local key = KEYS[3] .. s
  bad = check_types({key, 'list', 'shard list shard'})
  if bad then return bad end
  n = n + redis.call('llen', key)
end
return n
