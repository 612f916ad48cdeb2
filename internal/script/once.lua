-- once.lua: makes a state-changing script answer a re-send of the same
-- call (go-redis re-sends a command whose reply was lost) from a record of
-- its first reply instead of running again. script.NewOnce wraps the
-- script's source between once_head and once_tail; the body runs as a
-- function, and sees its own KEYS and ARGV: the record key (the last key)
-- and its TTL in ms (the last argument; 0: keep no record) are taken off
-- first. An error reply is not recorded: a script fails before its first
-- write, so running it again is harmless.
--@head
local ONCE_MS = tonumber(table.remove(ARGV))
local ONCE_KEY = table.remove(KEYS)

-- once_enc encodes a reply: integers 'i<n>;', strings 's<len>:<bytes>',
-- arrays 'a<n>:' then the elements, nil or false 'n'.
local function once_enc(v, out)
  local t = type(v)
  if t == 'number' then
    out[#out + 1] = 'i' .. string.format('%d', v) .. ';'
  elseif t == 'boolean' then
    out[#out + 1] = v and 'i1;' or 'n'
  elseif t == 'string' then
    out[#out + 1] = 's' .. #v .. ':' .. v
  elseif t == 'table' then
    out[#out + 1] = 'a' .. #v .. ':'
    for i = 1, #v do once_enc(v[i], out) end
  else
    out[#out + 1] = 'n'
  end
  return out
end

-- once_dec decodes the value at position i of s; returns it and the next
-- position.
local function once_dec(s, i)
  local c = string.sub(s, i, i)
  if c == 'i' then
    local j = string.find(s, ';', i, true)
    return tonumber(string.sub(s, i + 1, j - 1)), j + 1
  elseif c == 's' then
    local j = string.find(s, ':', i, true)
    local n = tonumber(string.sub(s, i + 1, j - 1))
    return string.sub(s, j + 1, j + n), j + n + 1
  elseif c == 'a' then
    local j = string.find(s, ':', i, true)
    local n = tonumber(string.sub(s, i + 1, j - 1))
    local arr = {}
    i = j + 1
    for k = 1, n do arr[k], i = once_dec(s, i) end
    return arr, i
  end
  return false, i + 1
end

if ONCE_MS > 0 then
  -- Only this call writes its record key, so it is a string or missing.
  local prev = redis.call('get', ONCE_KEY)
  if prev then return (once_dec(prev, 1)) end
end
local ONCE_REPLY = (function()
--@tail
end)()
if ONCE_MS > 0 and not (type(ONCE_REPLY) == 'table' and ONCE_REPLY.err) then
  redis.call('set', ONCE_KEY, table.concat(once_enc(ONCE_REPLY, {})), 'PX', ONCE_MS)
end
return ONCE_REPLY
