-- inspect_runnow.lua: move a delayed task (not yet due, or waiting to
-- retry) to the back of its ready list at once, waking its queue's idle
-- workers as promote does. Its failed attempts and last error are kept.
-- Run once per call (script.NewOnce): a re-send gets the first reply.
-- (lib.lua and common.lua are prepended.)
-- KEYS[1..7] the group's keys (common.lua)
-- ARGV[1] id
-- returns 1 moved, 0 not in delayed (or delayed without its fields, then
-- its ID is deleted)
local id = ARGV[1]
local due = rd('zset', R_DELAYED, 'zscore', DELAYED, id)
local h = due and task(id)
need(TASKS, 'hash', R_TASKS)
if BAD then return BAD end
if not due then return 0 end
redis.call('zrem', DELAYED, id)
if not h then
  forget(id)
  return 0
end
push(id, false)
return 1
