-- promote.lua: move up to ARGV[1] due delayed tasks to their ready lists.
-- (common.lua is prepended.)
-- KEYS[1..8] the group's keys (common.lua)
-- ARGV[1] batch
-- returns {promoted, 1 if more tasks are due}
local now = now_ms()
local n = promote(now, tonumber(ARGV[1]))
local more = 0
if #redis.call('zrangebyscore', DELAYED, '-inf', now, 'LIMIT', 0, 1) > 0 then more = 1 end
return {n, more}
