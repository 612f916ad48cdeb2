-- stats.lua (after common.lua): what an ad is and has learned. Read-only.
-- ARGV[1] ad
-- returns {type, base value, eCPM, views, clicks, actions} (numbers as
-- strings), or nil when ad is not indexed
local ad = ARGV[1]
local bad = check_common()
if bad then return bad end
local typ
bad, typ = check_ad(ad)
if bad then return bad end
if not typ then return false end
local function s(k, m) return redis.call('ZSCORE', k, m) or '0' end
return {typ, s(BASE, ad), s(VALUE, ad), s(K('views', ad), ''), s(K('clicks', ad), ''), s(K('actions', ad), '')}
