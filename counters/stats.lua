-- stats.lua: add one value to the statistics (count, sum, min, max, sum of
-- squares) of one context for the hour of its time, in one atomic step
-- (a once-script: a re-send adds it once). The hour rotates inside the
-- same step: a value of a newer hour moves the current hour to the
-- previous one (or drops both when the current one is older than the hour
-- just before), so no value is lost or counted twice at a boundary.
-- With ARGV[3], it also ranks the context by the mean of that hour among
-- the slowest (the book's access_time), in the same step.
-- KEYS[1] cur      HASH hour (Unix s of its start), count, sum, min, max, sumsq
-- KEYS[2] last     HASH the same, for the hour before cur's
-- KEYS[3] slowest  ZSET context -> mean (only with ARGV[3])
-- ARGV[1] value ('%.17g')   ARGV[2] time (Unix s; '' = now)
-- ARGV[3] how many of the slowest to keep ('': do not rank)   ARGV[4] context
-- ARGV[5] now (Unix s; '' = the server's TIME)
-- returns {hour, count, sum, min, max, sumsq} of the hour written, as
-- strings, the error TOOOLD when the time is before the previous hour, or
-- the error AHEAD when it is more than 60 s (counters.MaxAhead) after now
local spec = {KEYS[1], 'hash', 'counters stats', KEYS[2], 'hash', 'counters stats previous hour'}
local keep = tonumber(ARGV[3])
if keep then
  spec[7], spec[8], spec[9] = KEYS[3], 'zset', 'counters slowest'
end
local bad = check_types(spec)
if bad then return bad end
local now = tonumber(ARGV[5])
if not now then now = tonumber(redis.call('time')[1]) end
local t = tonumber(ARGV[2]) or now
if t > now + 60 then
  return redis.error_reply(string.format('AHEAD counters: time %d is more than 60 s after now (%d)', t, now))
end
local hour = t - t % 3600
local v = tonumber(ARGV[1])

-- read reads the statistics of key as this script writes them: hour a
-- multiple of 3600 and count a positive integer (a count of 0 or less
-- would make the mean NaN, which ZADD refuses after the HSET), within
-- ±2^53; the others finite numbers in decimal (not what Lua's tonumber
-- also takes: ' 1', '0x10', 'inf', 'nan').
local function read(key, role)
  local h, flat = {}, redis.call('hgetall', key)
  for i = 1, #flat, 2 do
    local f, v = flat[i], flat[i + 1]
    local x, want = tonumber(v), nil
    if f == 'hour' then
      if not is_count(v) or x % 3600 ~= 0 then want = 'a multiple of 3600 within ±2^53' end
    elseif f == 'count' then
      if not is_count(v) or x < 1 then want = 'a positive integer within 2^53' end
    elseif not x or not is_finite(x) or not string.match(v, '^%-?%d[%d%.eE%+%-]*$') then
      want = 'a finite number'
    end
    if want then
      return nil, key_error('CORRUPT', key, role .. ' field ' .. f, string.format('%q', string.sub(v, 1, 40)), want)
    end
    h[f] = x
  end
  return h
end
local cur, err = read(KEYS[1], 'counters stats')
if err then return err end
local last
last, err = read(KEYS[2], 'counters stats previous hour')
if err then return err end

local key, s, rotate = KEYS[1], cur, nil
if cur.hour and hour > cur.hour then
  if hour - cur.hour == 3600 then rotate = 'rename' else rotate = 'drop' end
  s = {}
elseif cur.hour and hour < cur.hour then
  if hour ~= cur.hour - 3600 then
    return redis.error_reply('TOOOLD counters: ' .. KEYS[1] .. ': hour ' .. hour .. ' is before the previous hour')
  end
  key = KEYS[2]
  s = last
  if s.hour ~= hour then s = {} end
end

local count = (s.count or 0) + 1
local sum = (s.sum or 0) + v
local sumsq = (s.sumsq or 0) + v * v
local lo, hi = v, v
if s.min and s.min < lo then lo = s.min end
if s.max and s.max > hi then hi = s.max end
if not is_finite(sum) or not is_finite(sumsq) then
  return redis.error_reply('OVERFLOW counters: ' .. key .. ': the sum or the sum of squares would be infinite')
end

if rotate == 'rename' then
  redis.call('rename', KEYS[1], KEYS[2])
elseif rotate == 'drop' then
  redis.call('del', KEYS[1], KEYS[2])
elseif key == KEYS[2] and last.hour ~= hour then
  redis.call('del', KEYS[2])
end
-- '%.17g' round-trips a double; '1e+20' gets a '.0' for Lua readers that
-- want a point before an exponent.
local function num(x)
  local f = string.format('%.17g', x)
  if string.find(f, 'e', 1, true) and not string.find(f, '.', 1, true) then
    f = string.gsub(f, 'e', '.0e')
  end
  return f
end
local out = {string.format('%d', hour), string.format('%d', count), num(sum), num(lo), num(hi), num(sumsq)}
redis.call('hset', key, 'hour', out[1], 'count', out[2], 'sum', out[3], 'min', out[4], 'max', out[5], 'sumsq', out[6])
if keep then
  redis.call('zadd', KEYS[3], num(sum / count), ARGV[4])
  -- No ZSET holds 2^53 members; a larger keep would reach Redis as a
  -- float ('-9.2e+18'), refused after the writes above.
  redis.call('zremrangebyrank', KEYS[3], 0, math.max(-keep - 1, -9007199254740992))
end
return out
