-- topremove.lua: remove members from a ranking (ZREM). Run as a
-- once-script: a re-send is answered from the first run's record, so the
-- count is the one the first run removed. The ranking's TTL is left as it
-- is.
-- KEYS[1] ranking   ARGV[1..] members
-- returns how many of them were in the ranking
local bad = check_types({KEYS[1], 'zset', 'cache top ranking'})
if bad then return bad end
local n, i = 0, 1
while i <= #ARGV do -- in chunks: unpack has a limit
  local j = math.min(i + 499, #ARGV)
  n = n + redis.call('zrem', KEYS[1], unpack(ARGV, i, j))
  i = j + 1
end
return n
