-- len.lua: the length of a sharded list (book 11.4, sharded_llen): the sum
-- of its shards' lengths, first to last. Read only.
-- KEYS[1] first STRING   KEYS[2] last STRING   KEYS[3] shard prefix
-- returns the length
-- The ends are shard numbers within ±2^52 (push.lua says why).
local END = 2^52 - 1
local bad = check_range(KEYS[1], 'shard list first', -END, END, 'an integer within ±2^52')
  or check_range(KEYS[2], 'shard list last', -END, END, 'an integer within ±2^52')
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
