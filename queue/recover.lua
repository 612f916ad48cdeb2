-- recover.lua: take up to ARGV[1] tasks whose lease expired out of
-- inflight: back to the front of their ready list, or dead when they have
-- no retry left. (common.lua is prepended.)
-- KEYS[1..8] the group's keys (common.lua)
-- ARGV[1] batch   ARGV[2] dead limit
-- returns {recovered, 1 if more leases have expired}
local now = now_ms()
local n = recover(now, tonumber(ARGV[1]), tonumber(ARGV[2]))
local more = 0
if #redis.call('zrangebyscore', INFLIGHT, '-inf', now, 'LIMIT', 0, 1) > 0 then more = 1 end
return {n, more}
