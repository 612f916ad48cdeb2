-- index.lua (after common.lua): index an ad, or re-index it (its
-- learning starts over, and the targetings served before it no longer
-- take clicks for it: its since mark). Run as a once-script.
-- ARGV[1] ad  ARGV[2] type (cpc|cpa|cpm)  ARGV[3] value
-- ARGV[4] n locations, the locations, then m words, the words
-- returns 1 added, 0 replaced
local ad, typ, value = ARGV[1], ARGV[2], to_number(ARGV[3]) -- Go writes 1e+06
local nl = tonumber(ARGV[4])
local nw = tonumber(ARGV[5 + nl])
local bad = check_common()
if bad then return bad end
local old
bad, old = check_ad(ad)
if bad then return bad end
bad = since_of(ad)
if bad then return bad end
local spec = {}
for i = 5, 4 + nl do
  spec[#spec + 1] = K('req', ARGV[i]); spec[#spec + 1] = 'set'; spec[#spec + 1] = 'adtarget location'
end
for i = 5, 4 + nl do
  for j = 6 + nl, 5 + nl + nw do
    spec[#spec + 1] = KW(ARGV[i], ARGV[j]); spec[#spec + 1] = 'zset'; spec[#spec + 1] = 'adtarget word'
  end
end
bad = check_types(spec)
if bad then return bad end

-- The first eCPM: the book's to_ecpm(1000, AVERAGE_PER_1K[type], value),
-- the average being the type's clicks (actions) per 1000 views so far,
-- 1 before any. Computed before the first write: ZADD refuses NaN.
local ecpm = value
if typ ~= 'cpm' then
  local views = tonumber(redis.call('HGET', STATS, typ .. ':views') or '0')
  local clicks = tonumber(redis.call('HGET', STATS, typ .. (typ == 'cpa' and ':actions' or ':clicks')) or '0')
  if views > 0 and clicks > 0 then ecpm = value * 1000 * clicks / views end
end
if not is_finite(ecpm) then
  return key_error('CORRUPT', STATS, 'adtarget stats of ' .. typ, 'an eCPM of ' .. tostring(ecpm), 'a finite eCPM')
end
if old then remove_ad(ad) end
for i = 5, 4 + nl do
  redis.call('SADD', K('req', ARGV[i]), ad)
  redis.call('SADD', K('loc', ad), ARGV[i])
  for j = 6 + nl, 5 + nl + nw do redis.call('ZADD', KW(ARGV[i], ARGV[j]), 0, ad) end
end
for i = 6 + nl, 5 + nl + nw do
  redis.call('SADD', K('terms', ad), ARGV[i])
end
redis.call('HSET', TYPES, ad, typ)
-- The targetings served so far are of an earlier indexing (or another ad):
-- their clicks must not count on this one, which has no view yet.
local served = redis.call('GET', SERVED)
if served and tonumber(served) > 0 then redis.call('HSET', SINCE, ad, served) end
redis.call('ZADD', VALUE, ecpm, ad)
redis.call('ZADD', BASE, ARGV[3], ad)
if old then return 0 end
return 1
