-- mint(key): the next value of the counter at key, strictly increasing even
-- if the counter is lost (a restart without persistence, a failover): a
-- counter that INCR finds new starts from the server time in microseconds,
-- which is above every value minted before as long as the server clock does
-- not go back (fewer than one mint per microsecond since the first).
-- Values stay below 2^53, which Lua's numbers hold exactly (beyond, two
-- mints could return the same value): at 2^53 the INCR is undone and mint
-- fails, changing nothing, as it does on a counter INCR refuses.
local function mint(key)
  local n = redis.call('incr', key)
  if n >= 2^53 then
    redis.call('decr', key)
    error('counter at its maximum')
  end
  if n == 1 then
    local t = redis.call('time')
    n = tonumber(t[1]) * 1000000 + tonumber(t[2])
    redis.call('set', key, string.format('%d', n))
  end
  return n
end
