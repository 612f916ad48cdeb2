-- promote.lua: move up to ARGV[1] due delayed tasks to their ready lists.
-- Run once per call (script.NewOnce): a re-send gets the first reply.
-- (lib.lua and common.lua are prepended.)
-- KEYS[1..7] the group's keys (common.lua)
-- ARGV[1] batch   ARGV[2] dead limit (a task whose fields do not parse
--         goes to dead)
-- returns {promoted, 1 if more tasks are due}
local now = now_ms()
local ids = read_promote(now, tonumber(ARGV[1]))
if BAD then return BAD end
local n = promote(ids, now, tonumber(ARGV[2]))
local more = 0
if #redis.call('zrangebyscore', DELAYED, '-inf', now, 'LIMIT', 0, 1) > 0 then more = 1 end
return {n, more}
