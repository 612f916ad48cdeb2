-- common.lua: helpers of the search scripts, prepended to each (after
-- check.lua, whose key_error they use).
--
-- Postings: a token ('t:<term>' or 'g:<field>:<value>') has a SET of
-- document numbers at <set prefix><token>, or, for a frequent term, a
-- STRING bitmap at <bitmap prefix><token> whose bit n (SETBIT order) is
-- set when document n holds the term. At most one of the two exists.

local CHUNK = 1000 -- values per command (Lua's unpack has a limit)

-- set_card: the cardinality of the SET at key (0 when missing), or nil and
-- an error reply when key holds another type.
local function set_card(key, role)
  local n = redis.pcall('SCARD', key)
  if type(n) == 'table' then
    return nil, key_error('WRONGTYPE', key, role, 'a ' .. redis.call('TYPE', key).ok, 'a set')
  end
  return n
end

-- bitmap_len: the length of the STRING at key (0 when missing), or nil and
-- an error reply when key holds another type.
local function bitmap_len(key, role)
  local n = redis.pcall('STRLEN', key)
  if type(n) == 'table' then
    return nil, key_error('WRONGTYPE', key, role, 'a ' .. redis.call('TYPE', key).ok, 'a string')
  end
  return n
end

-- call_chunked runs redis.call(cmd, key, <head...>, <chunk of items>) over
-- items in chunks; returns the sum of integer replies.
local function call_chunked(cmd, key, items)
  local sum = 0
  for i = 1, #items, CHUNK do
    local r = redis.call(cmd, key, unpack(items, i, math.min(i + CHUNK - 1, #items)))
    if type(r) == 'number' then sum = sum + r end
  end
  return sum
end

-- set_bits sets (v = 1) or clears (v = 0) the bits nums of the bitmap at
-- key: BITFIELD, or SETBIT one by one where BITFIELD is missing
-- (miniredis).
local has_bitfield = true
local function set_bits(key, nums, v)
  local i = 1
  while has_bitfield and i <= #nums do
    local args = {}
    for j = i, math.min(i + 249, #nums) do
      args[#args + 1] = 'SET'; args[#args + 1] = 'u1'; args[#args + 1] = nums[j]; args[#args + 1] = v
    end
    local r = redis.pcall('BITFIELD', key, unpack(args))
    if type(r) == 'table' and r.err then
      if string.find(r.err, 'unknown command', 1, true) then
        has_bitfield = false
      else
        return redis.error_reply(r.err)
      end
    else
      i = i + 250
    end
  end
  if not has_bitfield then
    for j = i, #nums do redis.call('SETBIT', key, nums[j], v) end
  end
end

-- bitmap_nums returns the numbers of the set bits of the bitmap at key in
-- order, after skipping the first skip of them, at most want of them
-- (want < 0: all). With rev, from the highest down.
local function bitmap_nums(key, skip, want, rev)
  local out = {}
  if want == 0 then return out end
  local len = redis.call('STRLEN', key)
  local STEP = 4096
  if not rev then
    local pos = 0 -- byte offset
    while skip > 0 and pos < len do
      local c = redis.call('BITCOUNT', key, pos, math.min(pos + STEP, len) - 1)
      if c > skip then break end
      skip = skip - c
      pos = pos + STEP
    end
    while pos < len do
      if skip == 0 then
        -- jump over zero bytes
        local p = redis.call('BITPOS', key, 1, pos)
        if p < 0 then return out end
        pos = math.floor(p / 8)
      end
      local last = math.min(pos + 63, len - 1)
      local bytes = {string.byte(redis.call('GETRANGE', key, pos, last), 1, -1)}
      for i = 1, #bytes do
        local b = bytes[i]
        if b ~= 0 then
          local base = (pos + i - 1) * 8
          local mask = 128
          for j = 0, 7 do
            if b >= mask then
              b = b - mask
              if skip > 0 then
                skip = skip - 1
              else
                out[#out + 1] = base + j
                if #out == want then return out end
              end
            end
            mask = mask / 2
          end
        end
      end
      pos = last + 1
    end
    return out
  end
  local stop = len -- exclusive end byte
  while skip > 0 and stop > 0 do
    local from = math.max(stop - STEP, 0)
    local c = redis.call('BITCOUNT', key, from, stop - 1)
    if c > skip then break end
    skip = skip - c
    stop = from
  end
  while stop > 0 do
    local from = math.max(stop - 64, 0)
    local bytes = {string.byte(redis.call('GETRANGE', key, from, stop - 1), 1, -1)}
    for i = #bytes, 1, -1 do
      local b = bytes[i]
      if b ~= 0 then
        local base = (from + i - 1) * 8
        for j = 7, 0, -1 do
          if b % 2 == 1 then
            if skip > 0 then
              skip = skip - 1
            else
              out[#out + 1] = base + j
              if #out == want then return out end
            end
          end
          b = math.floor(b / 2)
        end
      end
    end
    stop = from
  end
  return out
end

-- bit_of reports whether bit n of the bitmap string s is set.
local function bit_of(s, n)
  local b = string.byte(s, math.floor(n / 8) + 1)
  if not b then return false end
  return math.floor(b / 2 ^ (7 - n % 8)) % 2 == 1
end

-- is_text reports whether token is a term ('t:...'), which may have a
-- bitmap posting; tags never do.
local function is_text(token)
  return string.sub(token, 1, 2) == 't:'
end

-- fmt_score formats a score with every digit (Lua's tostring keeps 14).
local function fmt_score(x)
  return string.format('%.17g', x)
end
