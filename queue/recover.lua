-- recover.lua: take up to ARGV[1] tasks whose lease expired out of
-- inflight: back to the front of their ready list, or dead when they have
-- no retry left. Run once per call (script.NewOnce): a re-send gets the
-- first reply. (lib.lua and common.lua are prepended.)
-- KEYS[1..7] the group's keys (common.lua)   KEYS[8] unique lock prefix
-- ARGV[1] batch   ARGV[2] dead limit
-- returns {recovered, 1 if more leases have expired}
UNIQUE = KEYS[8]
local now = now_ms()
local plan = read_recover(now, tonumber(ARGV[1]))
if BAD then return BAD end
local n = recover(plan, now, tonumber(ARGV[2]))
local more = 0
if #redis.call('zrangebyscore', INFLIGHT, '-inf', now, 'LIMIT', 0, 1) > 0 then more = 1 end
return {n, more}
