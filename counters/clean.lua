-- clean.lua: delete the samples of one counter that are older than each
-- precision's retention (its last 'samples' slices up to now), at most
-- ARGV[2] per precision, and forget the counter once no sample is left.
-- Deleting is bounded: from the precision's watermark (every slice below
-- it is gone already) up to the new one, slice by slice, or by reading the
-- fields present when there are fewer of them. The watermark is raised to
-- the end of what was deleted, so that no update writes a slice again once
-- a clean has passed it. (A once-script: a re-send gets the first counts.)
-- KEYS[1] known    HASH step -> samples; 'w'..step -> watermark (update.lua)
-- KEYS[2] samples  HASH '<step>:<slice start>' -> count
-- ARGV[1] now (Unix s; '' = the server's TIME)   ARGV[2] max deletions per precision
-- returns {samples deleted, 1 if more is left to delete, 1 if forgotten}
local now = tonumber(ARGV[1])
if not now then now = tonumber(redis.call('time')[1]) end
local limit = tonumber(ARGV[2])
local bad = check_types({KEYS[1], 'hash', 'counters known', KEYS[2], 'hash', 'counters samples'})
if bad then return bad end
local known = redis.call('hgetall', KEYS[1])
if #known == 0 then return {0, 0, 0} end
local fields = {}
for i = 1, #known, 2 do fields[known[i]] = known[i + 1] end
local len = redis.call('hlen', KEYS[2])

-- Plan (reading and checking only), then write.
local del, wset, more, hkeys = {}, {}, 0, nil
local cut = {} -- step -> cutoff, for the fields read with HKEYS
for f, keep in pairs(fields) do
  if string.match(f, '^%d+$') then
    -- A step (update.lua's field names: positive, no leading zero), its
    -- samples kept, and a watermark that is a slice start of the step:
    -- a step of 0 would loop for ever below, a watermark between slices
    -- would delete no sample and pass them all.
    local step = tonumber(f)
    if not is_count(f) or step < 1 then
      return key_error('CORRUPT', KEYS[1], 'counters known field ' .. f, string.format('%q', string.sub(f, 1, 40)), 'a step: a positive integer')
    end
    if not is_count(keep) or tonumber(keep) < 1 then
      return key_error('CORRUPT', KEYS[1], 'counters known field ' .. f, string.format('%q', string.sub(keep, 1, 40)), 'a positive integer')
    end
    local w = fields['w' .. f]
    if w and not (is_count(w) and tonumber(w) % step == 0) then
      return key_error('CORRUPT', KEYS[1], 'counters known field w' .. f, string.format('%q', string.sub(w, 1, 40)), 'a multiple of ' .. f .. ' within ±2^53')
    end
    w = tonumber(w)
    local cutoff = math.floor(now / step) * step - (tonumber(keep) - 1) * step
    if cutoff < -9007199254740992 then
      return key_error('CORRUPT', KEYS[1], 'counters known field ' .. f, string.format('%q', string.sub(keep, 1, 40)), 'samples kept that end within ±2^53 s')
    end
    if w and cutoff <= w then
      -- nothing new to delete
    elseif len == 0 then
      wset[#wset + 1], wset[#wset + 2] = 'w' .. f, string.format('%d', cutoff)
    elseif w and (cutoff - w) / step <= limit and ((cutoff - w) / step <= len or len > limit) then
      for s = w, cutoff - step, step do del[#del + 1] = f .. ':' .. string.format('%d', s) end
      wset[#wset + 1], wset[#wset + 2] = 'w' .. f, string.format('%d', cutoff)
    elseif len <= limit or not w then
      cut[f] = cutoff -- read the fields present (below)
      wset[#wset + 1], wset[#wset + 2] = 'w' .. f, string.format('%d', cutoff)
    else
      local to = w + limit * step
      for s = w, to - step, step do del[#del + 1] = f .. ':' .. string.format('%d', s) end
      wset[#wset + 1], wset[#wset + 2] = 'w' .. f, string.format('%d', to)
      more = 1
    end
  end
end
if next(cut) then
  for _, s in ipairs(redis.call('hkeys', KEYS[2])) do
    local f, slice = string.match(s, '^(%d+):(%-?%d+)$')
    if not f then
      return key_error('CORRUPT', KEYS[2], 'counters samples', string.format('%q', string.sub(s, 1, 40)), '<step>:<slice> fields')
    end
    if cut[f] and tonumber(slice) < cut[f] then del[#del + 1] = s end
  end
end

local deleted = 0
for i = 1, #del, 1000 do
  deleted = deleted + redis.call('hdel', KEYS[2], unpack(del, i, math.min(i + 999, #del)))
end
if len - deleted == 0 and more == 0 then
  redis.call('del', KEYS[1])
  return {deleted, 0, 1}
end
if #wset > 0 then redis.call('hset', KEYS[1], unpack(wset)) end
return {deleted, more, 0}
