-- requeue.lua: move a dead task back to the end of its ready list, with its
-- failed attempts and last error cleared. (common.lua is prepended.)
-- KEYS[1..8] the group's keys (common.lua)
-- ARGV[1] id
-- returns 1 requeued, 0 not dead
local id = ARGV[1]
if redis.call('zrem', DEAD, id) == 0 then return 0 end
redis.call('hdel', TASKS, id .. ':a', id .. ':e')
if push(id, false) then return 1 end
return 0
