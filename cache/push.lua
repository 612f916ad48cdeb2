-- push.lua: push values onto a latest-n list (the last one newest) and
-- trim it to its n newest, with a TTL if the lists have one. Run as a
-- once-script: a re-send is answered from the first run's record instead
-- of pushing the values twice.
-- KEYS[1] list   ARGV[1] n   ARGV[2] ttl ms (0: none)   ARGV[3..] values, oldest first
-- returns 1
local bad = check_types({KEYS[1], 'list', 'cache latest list'})
if bad then return bad end
local i = 3
while i <= #ARGV do -- in chunks: unpack has a limit
  local j = math.min(i + 499, #ARGV)
  redis.call('lpush', KEYS[1], unpack(ARGV, i, j))
  i = j + 1
end
redis.call('ltrim', KEYS[1], 0, tonumber(ARGV[1]) - 1)
if ARGV[2] ~= '0' then
  redis.call('pexpire', KEYS[1], ARGV[2])
end
return 1
