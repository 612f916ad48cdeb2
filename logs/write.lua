-- write.lua: add entries to the recent logs of one log name (each kept to
-- its newest ARGV[1]) and, when ARGV[3] is '1', count them in the common
-- logs of their hour, in one atomic step (a once-script: a re-send writes
-- them once). The hour of a common log rotates inside the same step: an
-- entry of a newer hour moves the current hour's counts to the previous
-- hour (or drops both when the current one is older than the hour just
-- before), so no count is lost or rotated twice, however many writers.
-- KEYS[1] hours HASH severity -> start of the current hour (Unix s)
-- KEYS[1+3j-2], KEYS[1+3j-1], KEYS[1+3j]: recent LIST, common ZSET, last
--         ZSET of severity j (j = 1..#severities, in ARGV[6..])
-- ARGV[1] recent limit   ARGV[2] now (Unix µs; '' = the server's TIME)
-- ARGV[3] '1': common too   ARGV[4] number of severities S
-- ARGV[5] how far after now (µs) an entry's time may be, when common
-- ARGV[6..5+S] the severities
-- then per entry: severity index, time (Unix µs; '' = now), text, common key
-- returns the number of entries written, or the error TOOOLD when an
-- entry's hour is before the previous hour of its common log, or AHEAD
-- <entry> <time> <now> (entry from 0, times in Unix µs) when common and an
-- entry's time is more than ARGV[5] after now (it would make a future hour
-- current and refuse every write of the present one)
local limit, common, ns = tonumber(ARGV[1]), ARGV[3] == '1', tonumber(ARGV[4])
local now = tonumber(ARGV[2])
if not now then
  local t = redis.call('time')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local ahead = tonumber(ARGV[5])

local spec = {}
for j = 1, ns do
  spec[#spec + 1], spec[#spec + 2], spec[#spec + 3] = KEYS[3 * j - 1], 'list', 'logs recent'
  if common then
    spec[#spec + 1], spec[#spec + 2], spec[#spec + 3] = KEYS[3 * j], 'zset', 'logs common'
    spec[#spec + 1], spec[#spec + 2], spec[#spec + 3] = KEYS[3 * j + 1], 'zset', 'logs common previous hour'
  end
end
if common then
  spec[#spec + 1], spec[#spec + 2], spec[#spec + 3] = KEYS[1], 'hash', 'logs hours'
end
local bad = check_types(spec)
if bad then return bad end

local hours = {}
if common then
  for j = 1, ns do
    bad = check_hint(KEYS[1], ARGV[5 + j], 'logs hours')
    if bad then return bad end
    local v = redis.call('hget', KEYS[1], ARGV[5 + j])
    hours[j] = tonumber(v)
    -- Always an hour's start: another value would make every entry of the
    -- present hour TOOOLD.
    if hours[j] and hours[j] % 3600 ~= 0 then
      return key_error('CORRUPT', KEYS[1], 'logs hours field ' .. ARGV[5 + j], string.format('%q', v), 'a multiple of 3600')
    end
  end
end

local first = 6 + ns
local entries = (#ARGV - first + 1) / 4
local function field(e, k) return ARGV[first + 4 * (e - 1) + k] end
local function usec(e)
  return tonumber(field(e, 1)) or now
end

if common then
  for e = 1, entries do
    if usec(e) > now + ahead then
      return redis.error_reply(string.format('AHEAD %d %d %d', e - 1, usec(e), now))
    end
  end
end

-- The common logs, first without writing (to refuse an entry too old
-- before any write), then for real.
local function count(write)
  local cur = {}
  for j = 1, ns do cur[j] = hours[j] end
  for e = 1, entries do
    local j = tonumber(field(e, 0))
    local sec = math.floor(usec(e) / 1000000)
    local hour = sec - sec % 3600
    local ck, lk = KEYS[3 * j], KEYS[3 * j + 1]
    if not cur[j] then
      cur[j] = hour
      if write then
        redis.call('del', lk)
        redis.call('hset', KEYS[1], ARGV[5 + j], hour)
      end
    end
    local key = ck
    if hour > cur[j] then
      if write then
        if hour - cur[j] == 3600 and redis.call('exists', ck) == 1 then
          redis.call('rename', ck, lk)
        else
          redis.call('del', ck, lk)
        end
        redis.call('hset', KEYS[1], ARGV[5 + j], hour)
      end
      cur[j] = hour
    elseif hour < cur[j] then
      if hour ~= cur[j] - 3600 then
        return redis.error_reply('TOOOLD logs: ' .. ck .. ': an entry of hour ' .. hour .. ' is before the previous hour')
      end
      key = lk
    end
    if write then redis.call('zincrby', key, 1, field(e, 3)) end
  end
end
if common then
  local err = count(false)
  if err then return err end
  count(true)
end

local pushed = {}
for e = 1, entries do
  local j = tonumber(field(e, 0))
  redis.call('lpush', KEYS[3 * j - 1], string.format('%d', usec(e)) .. ' ' .. field(e, 2))
  pushed[j] = true
end
for j in pairs(pushed) do redis.call('ltrim', KEYS[3 * j - 1], 0, limit - 1) end
return entries
