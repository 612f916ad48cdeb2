-- click.lua (after common.lua): the book's record_click: a click (or for
-- a CPA ad an action) on ad after targeting tid, credited to the ad and
-- to the words the targeting matched, then update_cpms. Run as a
-- once-script.
-- ARGV[1] tid  ARGV[2] ad  ARGV[3] 1 for an action, 0 for a click
-- ARGV[4] targeting TTL in ms (a CPA ad's targeting is kept alive for its
-- action)
-- returns 1, or 0 when ad is not indexed, -1 for an action on an ad that
-- is not CPA, -2 when tid is no live targeting of ad (never served,
-- expired, of another ad, or served before ad was last indexed)
local tid, ad, action, ttl = ARGV[1], ARGV[2], ARGV[3] == '1', ARGV[4]
local bad = check_common()
if bad then return bad end
local typ, since
bad, typ = check_ad(ad)
if bad then return bad end
bad, since = since_of(ad)
if bad then return bad end
local mk = K('matched', tid)
bad = check_types({mk, 'hash', 'adtarget targeting'})
if bad then return bad end
if not typ then return 0 end
if action and typ ~= 'cpa' then return -1 end
if redis.call('HGET', mk, '') ~= ad then return -2 end
-- a targeting of the ad before it was last indexed (or removed and
-- indexed again): not a view of this indexing
if tonumber(tid) <= since then return -2 end

local key = K('clicks', ad)
if typ == 'cpa' then
  redis.call('PEXPIRE', mk, ttl)
  if action then key = K('actions', ad) end
end
redis.call('HINCRBY', STATS, typ .. (action and ':actions' or ':clicks'), 1)
for _, w in ipairs(redis.call('HKEYS', mk)) do
  if w ~= '' then redis.call('ZINCRBY', key, 1, w) end
end
redis.call('ZINCRBY', key, 1, '')
update_cpms(ad)
return 1
