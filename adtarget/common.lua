-- common.lua: the keys and shared steps of the adtarget scripts.
-- KEYS[1] is the targeter's key prefix, <prefix>{<name>}:, whose hash tag
-- keeps every key the scripts build from it in one slot:
--   types            HASH ad -> cpc | cpa | cpm
--   value            ZSET ad -> eCPM (what targeting ranks by)
--   base             ZSET ad -> bid value (CPC, CPA or CPM)
--   stats            HASH <type>:views | <type>:clicks | <type>:actions
--   served           STRING targeting ID counter
--   req:<location>   SET  ads targeting the location
--   word:<n>:<location>:<word>  ZSET ad -> eCPM bonus of the word, for the
--                    ads of the location (n is the location's length in
--                    bytes: no location and word can make another's key)
--   loc:<ad>         SET  the ad's locations
--   terms:<ad>       SET  the ad's words
--   views:<ad>       ZSET word -> views ('' the ad's own)
--   clicks:<ad>      ZSET word -> clicks ('' the ad's own)
--   actions:<ad>     ZSET word -> actions ('' the ad's own)
--   matched:<tid>    HASH a targeting: '' -> its ad, each word it matched -> 1 (TTL)
--   since            HASH ad -> the targeting counter when the ad was last
--                    indexed: a click names a targeting of this indexing
--                    only if its ID is greater (absent: every one is)
--   tmp:*            temporary keys of one target script, deleted before it returns
local P = KEYS[1]
local TYPES, VALUE, BASE, STATS, SERVED = P .. 'types', P .. 'value', P .. 'base', P .. 'stats', P .. 'served'
local SINCE = P .. 'since'
local function K(kind, x) return P .. kind .. ':' .. x end
-- KW is the posting of word among the ads of location: the book's
-- idx:<word> split by location, so that targeting reads a request's
-- postings directly instead of intersecting each word with the location.
local function KW(location, word) return P .. 'word:' .. #location .. ':' .. location .. ':' .. word end

local STAT_FIELDS = {'cpc:views', 'cpc:clicks', 'cpc:actions', 'cpa:views', 'cpa:clicks', 'cpa:actions',
  'cpm:views', 'cpm:clicks', 'cpm:actions'}

-- check_common checks the keys every script relies on. The counters it
-- increments or does arithmetic on (the targeting counter, the type
-- statistics) must be counts (integers within ±2^53, held exactly by Lua's
-- numbers): one out of range would fail its increment after the script's
-- first write, or turn into an eCPM of inf or NaN.
local function check_common()
  local bad = check_types({TYPES, 'hash', 'adtarget types', VALUE, 'zset', 'adtarget ecpm',
    BASE, 'zset', 'adtarget base value', STATS, 'hash', 'adtarget stats', SERVED, 'string', 'adtarget served'})
  if bad then return bad end
  local v = redis.call('GET', SERVED)
  if v and not is_count(v) then
    return key_error('CORRUPT', SERVED, 'adtarget served', string.format('%q', string.sub(v, 1, 40)), 'an integer within ±2^53')
  end
  local vs = redis.call('HMGET', STATS, unpack(STAT_FIELDS)) -- one read: Target runs this every time
  for i, f in ipairs(STAT_FIELDS) do
    if vs[i] and not is_count(vs[i]) then
      return key_error('CORRUPT', STATS, 'adtarget stats field ' .. f, string.format('%q', string.sub(vs[i], 1, 40)), 'an integer within ±2^53')
    end
  end
end

-- check_ad checks the keys of ad and, unless only_own, the postings of
-- its words and the SETs of its locations; it returns an error reply or
-- nil, and the ad's type (nil: not indexed).
local function check_ad(ad, only_own)
  local bad = check_types({K('terms', ad), 'set', 'adtarget ad words', K('loc', ad), 'set', 'adtarget ad locations',
    K('views', ad), 'zset', 'adtarget views', K('clicks', ad), 'zset', 'adtarget clicks',
    K('actions', ad), 'zset', 'adtarget actions'})
  if bad then return bad end
  local t = redis.call('HGET', TYPES, ad)
  if t and t ~= 'cpc' and t ~= 'cpa' and t ~= 'cpm' then
    return key_error('CORRUPT', TYPES, 'adtarget types field ' .. ad, string.format('%q', string.sub(t, 1, 40)), 'cpc, cpa or cpm')
  end
  if only_own then return nil, t end
  local terms = redis.call('SMEMBERS', K('terms', ad))
  for _, l in ipairs(redis.call('SMEMBERS', K('loc', ad))) do
    bad = check_types({K('req', l), 'set', 'adtarget location'})
    if bad then return bad end
    for _, w in ipairs(terms) do
      bad = check_types({KW(l, w), 'zset', 'adtarget word'})
      if bad then return bad end
    end
  end
  return nil, t
end

-- since_of returns an error reply, or nil and the ad's since mark (0 when
-- it has none): a read that checks the HASH's type and the mark's value
-- before any write.
local function since_of(ad)
  local s = redis.pcall('HGET', SINCE, ad)
  if type(s) == 'table' then return check_type(SINCE, 'hash', 'adtarget since') or s end
  if not s then return nil, 0 end
  if not is_count(s) or tonumber(s) < 0 then
    return key_error('CORRUPT', SINCE, 'adtarget since field ' .. ad, string.format('%q', string.sub(s, 1, 40)), 'an integer from 0 to 2^53-1')
  end
  return nil, tonumber(s)
end

-- score: the member's score, 0 when it has none (to_number: miniredis
-- replies 1e6 as '1e+6').
local function score(key, member)
  return to_number(redis.call('ZSCORE', key, member) or '0')
end

-- update_cpms is the book's update_cpms: the ad's eCPM from its own
-- views and clicks (actions for CPA), once it has one, and each word's
-- bonus from the views and clicks of the targetings that matched it.
-- The type averages it updates in the book are read from stats when an
-- ad is indexed.
local function update_cpms(ad)
  local t = redis.call('HGET', TYPES, ad)
  if t ~= 'cpc' and t ~= 'cpa' then return end
  local base = score(BASE, ad)
  local vk, ck = K('views', ad), K(t == 'cpa' and 'actions' or 'clicks', ad)
  local clicks = score(ck, '')
  local ecpm
  if clicks < 1 then
    ecpm = score(VALUE, ad)
  else
    ecpm = 1000 * base * clicks / math.max(score(vk, ''), 1)
    -- ZADD refuses NaN (scores written by another client as inf): keep
    -- the ad's eCPM then rather than fail after the script's first write.
    if ecpm == ecpm then redis.call('ZADD', VALUE, ecpm, ad) else ecpm = score(VALUE, ad) end
  end
  local locs = redis.call('SMEMBERS', K('loc', ad))
  for _, w in ipairs(redis.call('SMEMBERS', K('terms', ad))) do
    local c = score(ck, w)
    if c >= 1 then
      local bonus = 1000 * base * c / math.max(score(vk, w), 1) - ecpm
      if bonus == bonus then
        for _, l in ipairs(locs) do redis.call('ZADD', KW(l, w), bonus, ad) end
      end
    end
  end
end

-- remove_ad removes every trace of ad but the type statistics.
local function remove_ad(ad)
  local terms = redis.call('SMEMBERS', K('terms', ad))
  for _, l in ipairs(redis.call('SMEMBERS', K('loc', ad))) do
    redis.call('SREM', K('req', l), ad)
    for _, w in ipairs(terms) do redis.call('ZREM', KW(l, w), ad) end
  end
  redis.call('HDEL', TYPES, ad)
  redis.call('HDEL', SINCE, ad)
  redis.call('ZREM', VALUE, ad)
  redis.call('ZREM', BASE, ad)
  redis.call('DEL', K('loc', ad), K('terms', ad), K('views', ad), K('clicks', ad), K('actions', ad))
end
