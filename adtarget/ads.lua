-- ads.lua (after common.lua): a page of the indexed ads' IDs (the fields
-- of the types HASH, which Index sets and Remove deletes). Read-only.
-- ARGV[1] HSCAN cursor (a decimal string, "0" to start)  ARGV[2] count hint
-- returns {next cursor ("0": done), {ad, ...}}
local bad = check_types({TYPES, 'hash', 'adtarget types'})
if bad then return bad end
local r = redis.call('HSCAN', TYPES, ARGV[1], 'COUNT', ARGV[2])
local ids = {}
for i = 1, #r[2], 2 do ids[#ids + 1] = r[2][i] end
return {r[1], ids}
