-- requeue.lua: move a dead task back to the end of its ready list, with its
-- failed attempts and last error cleared. Run once per call
-- (script.NewOnce): a re-send gets the first reply.
-- (lib.lua and common.lua are prepended.)
-- KEYS[1..7] the group's keys (common.lua)
-- ARGV[1] id
-- returns 1 requeued, 0 not dead (or dead without its fields, then deleted)
local id = ARGV[1]
local died = rd('zset', R_DEAD, 'zscore', DEAD, id)
local h = died and task(id)
need(TASKS, 'hash', R_TASKS)
if BAD then return BAD end
if not died then return 0 end
redis.call('zrem', DEAD, id)
if not h then
  forget(id)
  return 0
end
redis.call('hdel', TASKS, id .. ':a', id .. ':e')
push(id, false)
return 1
