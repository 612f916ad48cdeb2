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

-- check_int: key is missing or a string holding an integer (a counter).
local function check_int(key, role)
  local bad = check_type(key, 'string', role)
  if bad then return bad end
  local v = redis.call('get', key)
  if v and not string.match(v, '^%-?%d+$') then
    return key_error('CORRUPT', key, role, string.format('%q', string.sub(v, 1, 40)), 'an integer')
  end
end

-- check_hint: field of the hash key is missing or holds an integer.
local function check_hint(key, field, role)
  local v = redis.call('hget', key, field)
  if v and not string.match(v, '^%-?%d+$') then
    return key_error('CORRUPT', key, role .. ' field ' .. field, string.format('%q', string.sub(v, 1, 40)), 'an integer')
  end
end
