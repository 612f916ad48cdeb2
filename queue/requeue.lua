-- requeue.lua: move a dead task back to the end of its ready list, with its
-- failed attempts and last error cleared. Run once per call
-- (script.NewOnce): a re-send gets the first reply.
-- (lib.lua, common.lua and drop.lua are prepended.)
-- KEYS[1..7] the group's keys (common.lua)
-- ARGV[1] id
-- returns 1 requeued, 0 not dead (or dead without its fields, then deleted)
local id = ARGV[1]
local died = rd('zset', R_DEAD, 'zscore', DEAD, id)
if died then read_requeue(id) end
need(TASKS, 'hash', R_TASKS)
if BAD then return BAD end
if not died then return 0 end
return requeue(id)
