-- rate.lua: GCRA rate limiting (the redis_rate contract): let cost
-- requests through if the key's theoretical arrival time (TAT) allows it
-- under rate per period with burst, and move the TAT on. Times are
-- microseconds of Redis's clock (TIME), exact in a double until the year
-- 2255. An allowed call records its reply under KEYS[2] for the client's
-- retry window, and a re-send of the call answers from it, so requests
-- are never counted twice; a refused call changes nothing and keeps no
-- record (its re-send may be let through, truthfully). Not a
-- script.NewOnce script: that would write a record for every refused call
-- too, so a flood of refused requests would fill memory with records.
-- KEYS[1] TAT STRING (microseconds), PX until the TAT  KEYS[2] reply record
-- ARGV[1] rate  ARGV[2] period in us  ARGV[3] burst  ARGV[4] cost (>= 0)
-- ARGV[5] record TTL in ms (0: keep none)
-- returns {allowed (cost or 0), remaining, retry_after us (-1: none),
--   reset_after us}
local rec = redis.call('GET', KEYS[2])
if rec then
  local remaining, reset = string.match(rec, '^(%d+) (.+)$')
  return {tonumber(ARGV[4]), tonumber(remaining), '-1', reset}
end
local got = redis.pcall('GET', KEYS[1])
if type(got) == 'table' and got.err then
  local bad = check_types({KEYS[1], 'string', 'cache rate limit'})
  if bad then return bad end
  return got
end
local tat
if got then
  tat = tonumber(got)
  if not tat then
    return key_error('CORRUPT', KEYS[1], 'cache rate limit', 'not a number', 'a TAT in microseconds')
  end
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local rate, period, burst, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local interval = period / rate
tat = math.max(tat or now, now)
local new_tat = tat + interval * cost
local diff = now - (new_tat - interval * burst)
if diff < 0 then
  return {0, 0, tostring(-diff), tostring(tat - now)}
end
local reset = new_tat - now
local remaining = math.floor(diff / interval)
if reset > 0 then
  redis.call('SET', KEYS[1], string.format('%.0f', new_tat), 'PX', math.ceil(reset / 1000))
  local ttl = tonumber(ARGV[5])
  if ttl > 0 then
    redis.call('SET', KEYS[2], remaining .. ' ' .. tostring(reset), 'PX', ttl)
  end
end
return {cost, remaining, '-1', tostring(reset)}
