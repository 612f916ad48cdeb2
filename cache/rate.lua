-- rate.lua: GCRA rate limiting (the redis_rate contract): let cost
-- requests through if the key's theoretical arrival time (TAT) allows it
-- under rate per period with burst, and move the TAT on. Times are
-- microseconds of Redis's clock (TIME), exact in a double until the year
-- 2255. It keeps no reply record: the Go side runs it in MULTI/EXEC
-- (script.RunTx), which go-redis never re-sends, so a request is never
-- counted twice and a lost reply is an unknown outcome.
-- KEYS[1] TAT STRING (microseconds), PX until the TAT
-- ARGV[1] rate  ARGV[2] period in us  ARGV[3] burst  ARGV[4] cost (>= 0)
-- returns {allowed (cost or 0), remaining, retry_after us (-1: none),
--   reset_after us}
local got = redis.pcall('GET', KEYS[1])
if type(got) == 'table' and got.err then
  local bad = check_types({KEYS[1], 'string', 'cache rate limit'})
  if bad then return bad end
  return got
end
local tat
if got then
  -- as this script writes it: Lua's tonumber also reads '1e300' (every
  -- request denied, with a retry time beyond any duration), 'nan', '0x10'
  if not is_count(got) then
    return key_error('CORRUPT', KEYS[1], 'cache rate limit', string.format('%q', string.sub(got, 1, 40)), 'a TAT in microseconds')
  end
  tat = tonumber(got)
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
end
return {cost, remaining, '-1', tostring(reset)}
