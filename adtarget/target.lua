-- target.lua (after internal/script's BytesLua and common.lua): the
-- book's target_ads and record_targeting_result in one atomic step. Run as
-- a once-script.
-- ARGV[1] matched-words TTL in ms  ARGV[2] n locations, the locations,
-- then m words, the words
-- returns {targeting ID, ad, eCPM with bonus as a string}, or nil when no
-- ad targets the locations. Scores are read with to_number (check.lua):
-- miniredis replies 1e6 as '1e+6', which its Lua's tonumber does not read.
local ttl, nl = ARGV[1], tonumber(ARGV[2])
local nw = tonumber(ARGV[3 + nl])
local bad = check_common()
if bad then return bad end
-- the targeting counter (a count, check_common): the next ID must be new
-- (2^53 + 1 is no double: 2^53 came again) and one a click can name (from
-- 1; no Target writes a negative count)
local served = tonumber(redis.call('GET', SERVED) or '0')
if served < 0 or served >= 2^53 then
  return key_error('CORRUPT', SERVED, 'adtarget served', string.format('%d', served), 'an integer from 0 to 2^53-1')
end
local spec, locs, words = {}, {}, {}
for i = 4 + nl, 3 + nl + nw do words[#words + 1] = ARGV[i] end
for i = 3, 2 + nl do
  locs[#locs + 1] = K('req', ARGV[i])
  spec[#spec + 1] = locs[#locs]; spec[#spec + 1] = 'set'; spec[#spec + 1] = 'adtarget location'
  for _, w in ipairs(words) do
    spec[#spec + 1] = KW(ARGV[i], w); spec[#spec + 1] = 'zset'; spec[#spec + 1] = 'adtarget word'
  end
end
bad = check_types(spec)
if bad then return bad end

-- match_location and finish_scoring without the book's big temporary
-- ZSETs: an ad's score is its eCPM + min/2 + max/2 of the bonuses of the
-- page's words it holds (its eCPM alone if it holds none); the best
-- score wins, ties to the greatest ID by bytes (the book's ZREVRANGE
-- order, whatever the server's locale: bless).
-- Each word's bonuses among the ads of the locations are the postings of
-- (location, word), read whole (an ad of several of the locations has the
-- same bonus in each). Then the best ad holding no page word: the eCPM
-- ZSET walked from the top, stopping at the first ad of the locations (m:
-- the location's SET itself, or their union on a temporary key), or as
-- soon as eCPMs fall below the best score.
local lo, hi = {}, {}
for i = 3, 2 + nl do
  for _, w in ipairs(words) do
    local r = redis.call('ZRANGE', KW(ARGV[i], w), 0, -1, 'WITHSCORES')
    for j = 1, #r, 2 do
      local ad, b = r[j], to_number(r[j + 1])
      if lo[ad] == nil then
        lo[ad], hi[ad] = b, b
      else
        if b < lo[ad] then lo[ad] = b end
        if b > hi[ad] then hi[ad] = b end
      end
    end
  end
end
local m = locs[1]
local tmps = {}
if #locs > 1 then
  m = P .. 'tmp:m'
  tmps[1] = m
  redis.call('SUNIONSTORE', m, unpack(locs))
end

local best, bestScore = nil, nil
local function consider(ad, sc)
  if best == nil or sc > bestScore or (sc == bestScore and bless(best, ad)) then best, bestScore = ad, sc end
end
local cands = {}
for ad in pairs(lo) do cands[#cands + 1] = ad end
for i = 1, #cands, 1000 do
  local chunk = {}
  for j = i, math.min(i + 999, #cands) do chunk[#chunk + 1] = cands[j] end
  local vs = redis.call('ZMSCORE', VALUE, unpack(chunk))
  for j, ad in ipairs(chunk) do
    if vs[j] then consider(ad, to_number(vs[j]) + lo[ad] * 0.5 + hi[ad] * 0.5) end
  end
end
-- The best ad holding no page word: a location with few ads (|m|^2 at
-- most the ads in all) is read whole; else the eCPM ZSET is walked from
-- the top, which takes about (all ads) / |m| steps.
local function score_all(ids)
  for i = 1, #ids, 1000 do
    local chunk = {}
    for j = i, math.min(i + 999, #ids) do chunk[#chunk + 1] = ids[j] end
    local vs = redis.call('ZMSCORE', VALUE, unpack(chunk))
    for j, ad in ipairs(chunk) do
      if vs[j] then consider(ad, to_number(vs[j])) end
    end
  end
end
local card = redis.call('SCARD', m)
local done = card == 0
if not done and card * card <= redis.call('ZCARD', VALUE) then
  local ids = {}
  for _, ad in ipairs(redis.call('SMEMBERS', m)) do
    if lo[ad] == nil then ids[#ids + 1] = ad end
  end
  score_all(ids)
  done = true
end
local from, page = 0, 64
while not done do
  local r = redis.call('ZREVRANGE', VALUE, from, from + page - 1, 'WITHSCORES')
  local ids, vals = {}, {}
  for j = 1, #r, 2 do
    local ad, v = r[j], to_number(r[j + 1])
    if best ~= nil and (v < bestScore or (v == bestScore and bless(ad, best))) then done = true; break end
    if lo[ad] == nil then ids[#ids + 1] = ad; vals[#vals + 1] = v end
  end
  if #ids > 0 then
    local in_m = redis.call('SMISMEMBER', m, unpack(ids))
    for j = 1, #ids do
      if in_m[j] == 1 then consider(ids[j], vals[j]); done = true; break end
    end
  end
  if #r < 2 * page then done = true end
  from = from + page
  if page < 4096 then page = page * 2 end
end
if #tmps > 0 then redis.call('DEL', unpack(tmps)) end
if best == nil then return false end
local ad, ecpm = best, string.format('%.17g', bestScore)
local vk = K('views', ad)
bad = check_types({vk, 'zset', 'adtarget views'})
if bad then return bad end
local since
bad, since = since_of(ad)
if bad then return bad end
-- update_cpms runs on the ad's 100th view: it writes the postings of the
-- ad's words, checked then.
local relearn = (score(vk, '') + 1) % 100 == 0
local typ
bad, typ = check_ad(ad, not relearn)
if bad then return bad end
if not typ then
  return key_error('CORRUPT', VALUE, 'adtarget ecpm', 'ad ' .. string.format('%q', string.sub(ad, 1, 40)) .. ' without a type', 'indexed ads')
end
-- tid is formatted with %d: Lua's own formatting of numbers (%.14g) would
-- write 1e14 and above in exponent form.
local tid = string.format('%d', served + 1)
local mk = K('matched', tid)
bad = check_types({mk, 'hash', 'adtarget targeting'})
if bad then return bad end

-- record_targeting_result: the targeting's ID, its ad and the words it
-- matched (for the clicks to come), the views of the type, the ad and the
-- words.
redis.call('SET', SERVED, tid)
-- A targeting counter set back (deleted by someone) would leave this
-- targeting at or below the ad's since mark, refusing its clicks: the
-- mark comes down below it.
if since >= served + 1 then redis.call('HSET', SINCE, ad, string.format('%d', served)) end
local terms = {}
for _, w in ipairs(redis.call('SMEMBERS', K('terms', ad))) do terms[w] = true end
local matched = {}
for _, w in ipairs(words) do
  if terms[w] then matched[#matched + 1] = w end
end
redis.call('DEL', mk) -- a stale targeting's, if the counter was reset
local fields = {'', ad}
for _, w in ipairs(matched) do fields[#fields + 1] = w; fields[#fields + 1] = '1' end
redis.call('HSET', mk, unpack(fields))
redis.call('PEXPIRE', mk, ttl)
redis.call('HINCRBY', STATS, typ .. ':views', 1)
for _, w in ipairs(matched) do redis.call('ZINCRBY', vk, 1, w) end
redis.call('ZINCRBY', vk, 1, '')
if relearn then update_cpms(ad) end
return {tonumber(tid), ad, ecpm}
