-- cancel.lua: delete a task that waits in delayed (not yet due, or waiting
-- to retry). Run once per call (script.NewOnce): a re-send gets the first
-- reply. (lib.lua and common.lua are prepended.)
-- KEYS[1..7] the group's keys (common.lua)
-- ARGV[1] id
-- returns 1 cancelled, 0 not in delayed
local id = ARGV[1]
local due = rd('zset', R_DELAYED, 'zscore', DELAYED, id)
need(TASKS, 'hash', R_TASKS)
if BAD then return BAD end
if not due then return 0 end
redis.call('zrem', DELAYED, id)
forget(id)
return 1
