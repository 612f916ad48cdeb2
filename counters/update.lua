-- update.lua: add n to the current slice of every precision of one
-- counter, in one atomic step (a once-script: a re-send counts once).
-- KEYS[1] known    HASH 'cfg' -> the precisions of the last writer (ARGV[4]);
--                  step (s) -> samples kept; 'w'..step -> the lowest slice
--                  start an update may still write at that step (the start
--                  of the retention when first used, raised by cleans)
-- KEYS[2] samples  HASH '<step>:<slice start, Unix s>' -> count
-- ARGV[1] n   ARGV[2] time to count at (Unix s; '' = now)
-- ARGV[3] now (Unix s; '' = the server's TIME)
-- ARGV[4] the writer's precisions, '<step>:<samples>,...'
-- ARGV[4+i] step of precision i (s)   ARGV[4+np+i] samples kept of it
-- returns a bitmask: bit i-1 set when precision i was skipped (its slice is
-- older than the retention, or was cleaned already); when every precision
-- is skipped nothing is written. A time more than 60 s (counters.MaxAhead)
-- after now is the error AHEAD, before any read or write.
--
-- The common case, counting now for a writer whose precisions are known
-- already, reads no watermark: a clean by a clock that is not ahead of
-- the writer's never cuts above the current slice.
local np = (#ARGV - 4) / 2
local n = tonumber(ARGV[1])
local now = tonumber(ARGV[3])
if not now then now = tonumber(redis.call('time')[1]) end
local t = tonumber(ARGV[2]) or now
if t > now + 60 then
  return redis.error_reply(string.format('AHEAD counters: time %d is more than 60 s after now (%d)', t, now))
end

local function wrong(key, role)
  return key_error('WRONGTYPE', key, role, 'a ' .. redis.call('type', key).ok, 'a hash')
end
-- The first reads double as the type checks (a hash command fails on
-- another type), before any write.
local cfg = redis.pcall('hget', KEYS[1], 'cfg')
if type(cfg) == 'table' and cfg.err then return wrong(KEYS[1], 'counters known') end
local sf = {}
for i = 1, np do
  local step = tonumber(ARGV[4 + i])
  sf[i] = ARGV[4 + i] .. ':' .. string.format('%d', t - t % step)
end
local cur = redis.pcall('hmget', KEYS[2], unpack(sf))
if cur.err then return wrong(KEYS[2], 'counters samples') end

local skipped, mset = 0, {}
if ARGV[2] ~= '' or cfg ~= ARGV[4] then
  local mf = {}
  for i = 1, np do mf[2 * i - 1], mf[2 * i] = ARGV[4 + i], 'w' .. ARGV[4 + i] end
  local meta = redis.call('hmget', KEYS[1], unpack(mf))
  for i = 1, np do
    local step, keep = tonumber(ARGV[4 + i]), tonumber(ARGV[4 + np + i])
    local w = meta[2 * i]
    -- Every watermark written is a slice start of its step (clean.lua
    -- deletes slice by slice from it): anything else is refused here too.
    if w and not (is_count(w) and tonumber(w) % step == 0) then
      return key_error('CORRUPT', KEYS[1], 'counters known field ' .. mf[2 * i], string.format('%q', string.sub(w, 1, 40)), 'a multiple of ' .. ARGV[4 + i] .. ' within ±2^53')
    end
    local from = now - now % step - (keep - 1) * step
    if not w then
      mset[#mset + 1], mset[#mset + 2] = mf[2 * i], string.format('%d', from)
    elseif tonumber(w) > from then
      from = tonumber(w)
    end
    if meta[2 * i - 1] ~= ARGV[4 + np + i] then
      mset[#mset + 1], mset[#mset + 2] = mf[2 * i - 1], ARGV[4 + np + i]
    end
    if t - t % step < from then
      skipped = skipped + 2 ^ (i - 1)
      sf[i] = false
    end
  end
  if skipped == 2 ^ np - 1 then return skipped end
  if cfg ~= ARGV[4] then mset[#mset + 1], mset[#mset + 2] = 'cfg', ARGV[4] end
end

-- Check every count before the first write.
local sset = {}
if n ~= 0 then
  for i = 1, np do
    if sf[i] then
      local v, x = cur[i], 0
      if v then
        -- A count as this script writes it (and Get reads it): not what
        -- Lua's tonumber also takes (' 12', '0x10', '1e3', '+5').
        if not is_count(v) then
          return key_error('CORRUPT', KEYS[2], 'counters samples field ' .. sf[i], string.format('%q', string.sub(v, 1, 40)), 'an integer within ±2^53')
        end
        x = tonumber(v)
      end
      local sum = x + n
      if sum > 9007199254740991 or sum < -9007199254740991 then
        return redis.error_reply('OVERFLOW counters: ' .. KEYS[2] .. ' field ' .. sf[i] .. ' would leave ±(2^53-1)')
      end
      sset[#sset + 1], sset[#sset + 2] = sf[i], string.format('%d', sum)
    end
  end
end

if #mset > 0 then redis.call('hset', KEYS[1], unpack(mset)) end
if #sset > 0 then redis.call('hset', KEYS[2], unpack(sset)) end
return skipped
