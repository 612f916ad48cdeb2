-- rowpeek.lua: defines peek(schedule, delay), withPeek and check_rows,
-- prepended to the row scripts.
-- It returns the row due first as {id, due, delay}: its schedule score (Unix
-- ms of the RowCacher's clock, below 0: at once) and its delay score (ms; '' when
-- the row has none), or {} when no row is scheduled.
local function peek(schedule, delay)
  local first = redis.call('ZRANGE', schedule, 0, 0, 'WITHSCORES')
  if not first[1] then return {} end
  local d = redis.call('ZSCORE', delay, first[1])
  return {first[1], first[2], d or ''}
end

-- withPeek returns {code, id, due, delay}: code then the next row, if any.
local function withPeek(code, schedule, delay)
  local out = {code}
  for _, v in ipairs(peek(schedule, delay)) do out[#out + 1] = v end
  return out
end


-- check_rows checks the types of the schedule and delay keys and, if given,
-- of the row's key (check_types comes from check.lua).
local function check_rows(schedule, delay, row)
  local spec = {schedule, 'zset', 'session row schedule', delay, 'zset', 'session row delays'}
  if row then
    spec[#spec + 1] = row; spec[#spec + 1] = 'string'; spec[#spec + 1] = 'session row'
  end
  return check_types(spec)
end
