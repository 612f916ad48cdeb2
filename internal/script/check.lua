-- check.lua: the checks a script runs on its keys before its first write,
-- so that a key someone else wrote makes it fail having changed nothing.
-- Prepended to every script by script.New. Each returns nil when the key is
-- fine, else an error reply that script.Run turns into a *ria.KeyError;
-- the script returns it at once:
--   local bad = check_types({KEYS[1], 'string', 'lock owner', KEYS[2], 'list', 'lock queue'})
--   if bad then return bad end
local function key_error(code, key, role, got, want)
  return redis.error_reply(code .. ' ria role=' .. role .. ';got=' .. got .. ';want=' .. want .. ';key=' .. key)
end

-- check_type: key is missing or of Redis type want ('string', 'hash',
-- 'list', 'set', 'zset').
local function check_type(key, want, role)
  local t = redis.call('type', key).ok
  if t ~= 'none' and t ~= want then
    return key_error('WRONGTYPE', key, role, 'a ' .. t, 'a ' .. want)
  end
end

-- check_types runs check_type over a flat list of key, type, role triples.
local function check_types(spec)
  for i = 1, #spec, 3 do
    local bad = check_type(spec[i], spec[i + 1], spec[i + 2])
    if bad then return bad end
  end
end

-- is_int64: v is an integer as Redis reads one for INCRBY (no '+', no
-- leading zeros, no '-0'), within 64 bits. A looser test would pass a value
-- that Redis then refuses at the increment, after the script's first write.
local function is_int64(v)
  if v == '0' then return true end
  local neg, d = string.match(v, '^(%-?)([1-9]%d*)$')
  if not d or #d > 19 then return false end
  return #d < 19 or d <= (neg == '-' and '9223372036854775808' or '9223372036854775807')
end

-- is_count: is_int64 within ±2^53, which Lua's numbers hold exactly and
-- which no increment a script makes takes past 64 bits.
local function is_count(v)
  if not is_int64(v) then return false end
  local d = string.match(v, '%d+')
  return #d < 16 or #d == 16 and d <= '9007199254740992'
end

-- is_finite: the number x is neither NaN nor ±inf. (Not a comparison with
-- math.huge: miniredis's Lua defines it as the largest finite double.)
local function is_finite(x) return x == x and x - x == 0 end

-- to_number: the number the string v spells, as Redis's Lua reads it
-- (tonumber, C's strtod), or nil. miniredis's Lua (gopher-lua) reads a
-- string without a '.' as a 64-bit integer only, so its tonumber is nil for
-- an exponent without a fraction ('2e+09', '1e-05': Go's FormatFloat 'g'
-- and miniredis's score replies write them), an integer beyond 64 bits,
-- 'inf' and 'nan'; those are read again here ('2.e+09' is the same number,
-- read exactly by both). Use it for every number a script reads that may
-- be a float (an argument, a score, a stored value); tonumber stays right
-- for the integers the scripts write.
local function to_number(v)
  local x = tonumber(v)
  if x ~= nil or type(v) ~= 'string' then return x end
  local m, e = string.match(v, '^%s*([+-]?%d+)([eE]?[+-]?%d*)%s*$')
  if m and (e == '' or string.match(e, '^[eE][+-]?%d+$')) then return tonumber(m .. '.' .. e) end
  local sign, w = string.match(string.lower(v), '^%s*([+-]?)(%a+)%s*$')
  if w == 'inf' or w == 'infinity' then
    if sign == '-' then return -1 / 0 end
    return 1 / 0
  elseif w == 'nan' then
    return 0 / 0
  end
end

-- check_int: key is missing or a string holding an integer (a counter, of
-- up to 64 bits).
local function check_int(key, role)
  local bad = check_type(key, 'string', role)
  if bad then return bad end
  local v = redis.call('get', key)
  if v and not is_int64(v) then
    return key_error('CORRUPT', key, role, string.format('%q', string.sub(v, 1, 40)), 'an integer')
  end
end

-- check_range: key is missing or a string holding an integer (is_int64)
-- from lo to hi; want names that range in the error. It checks the type
-- too, as check_int does.
local function check_range(key, role, lo, hi, want)
  local bad = check_type(key, 'string', role)
  if bad then return bad end
  local v = redis.call('get', key)
  if v and not (is_int64(v) and tonumber(v) >= lo and tonumber(v) <= hi) then
    return key_error('CORRUPT', key, role, string.format('%q', string.sub(v, 1, 40)), want)
  end
end

-- check_hint: field of the hash key is missing or holds a count: an
-- integer within ±2^53.
local function check_hint(key, field, role)
  local v = redis.call('hget', key, field)
  if v and not is_count(v) then
    return key_error('CORRUPT', key, role .. ' field ' .. field, string.format('%q', string.sub(v, 1, 40)), 'an integer within ±2^53')
  end
end
