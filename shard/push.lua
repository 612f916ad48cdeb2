-- push.lua: push values at one end of a sharded list (book 11.4.1,
-- sharded_push_helper), spilling into new shards past that end, and wake
-- every blocked pop. Run as a once-script (a re-send is answered from the
-- record of the first run).
-- KEYS[1] first STRING (number of the leftmost shard)
-- KEYS[2] last STRING (number of the rightmost shard)
-- KEYS[3] waiters ZSET (waiter id -> until, ms)
-- KEYS[4] shard prefix: shard n is KEYS[4]..n (a LIST), waiter w's wake
--         list is KEYS[4]..'wake:'..w; the hash tag keeps them in this slot
-- ARGV[1] 'l' or 'r'   ARGV[2] shard size   ARGV[3..] values, in push order
-- returns the number of values pushed
-- The ends are shard numbers, which no push takes anywhere near ±2^52:
-- one beyond 2^53 would be read as the nearest double, another shard, and
-- near 2^53 a step to the next shard would not move (a loop over shards
-- would not end).
local END = 2^52 - 1
local bad = check_range(KEYS[1], 'shard list first', -END, END, 'an integer within ±2^52')
  or check_range(KEYS[2], 'shard list last', -END, END, 'an integer within ±2^52')
  or check_types({KEYS[3], 'zset', 'shard list waiters'})
if bad then return bad end
local left = ARGV[1] == 'l'
local size = tonumber(ARGV[2])
local n = #ARGV - 2
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- Plan where the values go, checking every key before the first write.
local first = tonumber(redis.call('get', KEYS[1]) or '0')
local last = tonumber(redis.call('get', KEYS[2]) or '0')
local s = left and first or last
local step = left and -1 or 1
local plan = {}
local rem = n
while true do
  local key = KEYS[4] .. s
  bad = check_types({key, 'list', 'shard list shard'})
  if bad then return bad end
  local room = size - redis.call('llen', key)
  if room > 0 then
    local take = math.min(room, rem)
    plan[#plan + 1] = {key, take}
    rem = rem - take
  end
  if rem == 0 then break end
  s = s + step
end
local waiters = redis.call('zrangebyscore', KEYS[3], '(' .. now, '+inf')
for _, w in ipairs(waiters) do
  bad = check_types({KEYS[4] .. 'wake:' .. w, 'list', 'shard list wake'})
  if bad then return bad end
end

-- Write.
local i = 3
for _, p in ipairs(plan) do
  local j = i + p[2] - 1
  while i <= j do
    local k = math.min(i + 999, j) -- unpack at most 1000 values at a time
    redis.call(left and 'lpush' or 'rpush', p[1], unpack(ARGV, i, k))
    i = k + 1
  end
end
if left then
  redis.call('set', KEYS[1], s)
  if redis.call('exists', KEYS[2]) == 0 then redis.call('set', KEYS[2], last) end
else
  redis.call('set', KEYS[2], s)
  if redis.call('exists', KEYS[1]) == 0 then redis.call('set', KEYS[1], first) end
end
-- Wake every live waiter: each tries its pop again (and waits again if
-- another took the values).
for _, w in ipairs(waiters) do
  local wk = KEYS[4] .. 'wake:' .. w
  redis.call('rpush', wk, '1')
  redis.call('pexpire', wk, 60000)
end
if redis.call('exists', KEYS[3]) == 1 then redis.call('del', KEYS[3]) end
return n
