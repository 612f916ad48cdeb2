-- remove.lua (after common.lua): remove an ad. Run as a once-script.
-- ARGV[1] ad
-- returns 1 removed, 0 not indexed
local ad = ARGV[1]
local bad = check_common()
if bad then return bad end
local t
bad, t = check_ad(ad)
if bad then return bad end
bad = since_of(ad)
if bad then return bad end
if not t then return 0 end
remove_ad(ad)
return 1
