-- pop.lua: pop a value from one end of a sharded list (book 11.4.2,
-- sharded_lpop/sharded_rpop); when it is empty and the caller will wait,
-- register the caller so that the next push wakes it. Run as a
-- once-script.
-- KEYS[1] first STRING   KEYS[2] last STRING   KEYS[3] waiters ZSET
-- KEYS[4] shard prefix (see push.lua)
-- ARGV[1] 'l' or 'r'
-- ARGV[2] waiter id ('' when the caller does not wait)
-- ARGV[3] how long the waiter's registration lasts, ms; -1: the waiter
--         leaves (its registration and wake list are deleted, and it is not
--         registered again)
-- returns {1, value}, or {0} when the list is empty
-- The ends are shard numbers within ±2^52 (push.lua says why).
local END = 2^52 - 1
local bad = check_range(KEYS[1], 'shard list first', -END, END, 'an integer within ±2^52')
  or check_range(KEYS[2], 'shard list last', -END, END, 'an integer within ±2^52')
  or check_types({KEYS[3], 'zset', 'shard list waiters'})
if bad then return bad end
local wk
if ARGV[2] ~= '' then
  wk = KEYS[4] .. 'wake:' .. ARGV[2]
  bad = check_types({wk, 'list', 'shard list wake'})
  if bad then return bad end
end
local left = ARGV[1] == 'l'
local first = tonumber(redis.call('get', KEYS[1]) or '0')
local last = tonumber(redis.call('get', KEYS[2]) or '0')
if first > last then -- only a hand-made value does this; the search below would not end
  return key_error('CORRUPT', KEYS[1], 'shard list first', tostring(first), 'at most the last shard, ' .. last)
end
local s = left and first or last
local other = left and last or first
local step = left and 1 or -1

-- Find the shard to pop from (read only): the first non-empty one from our
-- end (shards are emptied from the ends, so normally the end one).
local found
while true do
  local key = KEYS[4] .. s
  bad = check_types({key, 'list', 'shard list shard'})
  if bad then return bad end
  if redis.call('llen', key) > 0 then
    found = s
    break
  end
  if s == other then break end
  s = s + step
end

-- Write.
if wk then redis.call('del', wk) end -- a wake from an earlier wait is spent
if not found then
  redis.call('del', KEYS[1], KEYS[2]) -- empty: the next push starts afresh
  if wk and tonumber(ARGV[3]) < 0 then
    redis.call('zrem', KEYS[3], ARGV[2])
  elseif wk then
    local t = redis.call('time')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    local ms = tonumber(ARGV[3])
    redis.call('zadd', KEYS[3], now + ms, ARGV[2])
    if redis.call('pttl', KEYS[3]) < ms then redis.call('pexpire', KEYS[3], ms + 1000) end
  end
  return {0}
end
local key = KEYS[4] .. found
local v = redis.call(left and 'lpop' or 'rpop', key)
local empty = redis.call('llen', key) == 0
if empty and found == other then
  redis.call('del', KEYS[1], KEYS[2]) -- the list is empty now
else
  local np = found
  if empty then np = found + step end
  if np ~= (left and first or last) then redis.call('set', left and KEYS[1] or KEYS[2], np) end
end
if wk then redis.call('zrem', KEYS[3], ARGV[2]) end
return {1, v}
