-- cancel.lua: delete a task that waits in delayed (not yet due, or waiting
-- to retry). Run once per call (script.NewOnce): a re-send gets the first
-- reply. (lib.lua and common.lua are prepended.)
-- A unique task's lock is released (if the task still holds it).
-- KEYS[1..7] the group's keys (common.lua)   KEYS[8] unique lock prefix
-- ARGV[1] id
-- returns 1 cancelled, 0 not in delayed
local id = ARGV[1]
UNIQUE = KEYS[8]
local due = rd('zset', R_DELAYED, 'zscore', DELAYED, id)
local u
if due then
  local v = rd('hash', R_TASKS, 'hget', TASKS, id)
  if v then
    local _
    _, _, _, _, u = header(v)
    read_lock(u)
  end
end
need(TASKS, 'hash', R_TASKS)
if BAD then return BAD end
if not due then return 0 end
redis.call('zrem', DELAYED, id)
forget(id)
release(id, u)
return 1
