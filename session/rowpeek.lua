-- rowpeek.lua: defines peek(schedule, delay, gen), withPeek and
-- check_rows, prepended to the row scripts.
-- peek returns the row due first as {id, due, delay, generation}: its
-- schedule score (Unix ms of the RowCacher's clock, below 0: at once), its
-- delay score (ms; '' when the row has none) and its generation ('' when
-- it has none: a row scheduled by another writer), or {} when no row is
-- scheduled. A RowCacher hands the generation back to rowstore.lua or
-- rowdrop.lua, which write only if it is still the row's: every schedule
-- and every store gives the row a new one (minted, never given twice).
local function peek(schedule, delay, gen)
  local first = redis.call('ZRANGE', schedule, 0, 0, 'WITHSCORES')
  if not first[1] then return {} end
  local d = redis.call('ZSCORE', delay, first[1])
  local g = redis.call('HGET', gen, first[1])
  return {first[1], first[2], d or '', g or ''}
end

-- withPeek returns {code, id, due, delay, generation}: code then the next
-- row, if any.
local function withPeek(code, schedule, delay, gen)
  local out = {code}
  for _, v in ipairs(peek(schedule, delay, gen)) do out[#out + 1] = v end
  return out
end

-- generation returns the row's generation, '' when it has none (as peek).
local function generation(gen, id)
  return redis.call('HGET', gen, id) or ''
end

-- check_rows checks the types of the schedule, delay and generation keys
-- and, if given, of the row's key and the generation counter (its value
-- too: an integer that mint can increment). check_types and check_int come
-- from check.lua.
local function check_rows(schedule, delay, gen, row, counter)
  local spec = {schedule, 'zset', 'session row schedule', delay, 'zset', 'session row delays',
    gen, 'hash', 'session row generations'}
  if row then
    spec[#spec + 1] = row; spec[#spec + 1] = 'string'; spec[#spec + 1] = 'session row'
  end
  local bad = check_types(spec)
  if bad then return bad end
  if counter then return check_int(counter, 'session row generation counter') end
end
