-- cancel.lua: delete a task that waits in delayed (not yet due, or waiting
-- to retry). (common.lua is prepended.)
-- KEYS[1..8] the group's keys (common.lua)
-- ARGV[1] id
-- returns 1 cancelled, 0 not in delayed
if redis.call('zrem', DELAYED, ARGV[1]) == 0 then return 0 end
forget(ARGV[1])
return 1
