-- inspect_bulk.lua: one batch of Purge, DeleteAllDead or RequeueAllDead:
-- the first tasks (at most ARGV[2]) of a queue's ready list, deleted, or
-- of the dead set (oldest first), deleted or requeued, each as Delete or
-- Requeue does it for one task (drop.lua). Run once per call
-- (script.NewOnce): a re-send gets the first reply.
-- (lib.lua, common.lua and drop.lua are prepended.)
-- KEYS[1..7] the group's keys (common.lua)   KEYS[8] unique lock prefix
-- KEYS[9] the ready list to purge (purge only)
-- ARGV[1] 'purge', 'delete' (dead tasks) or 'requeue' (dead tasks)
-- ARGV[2] the most IDs to take out of the list or set (1 to 1000)
-- returns {tasks deleted or requeued, IDs taken out, IDs left}
-- (an ID without fields is taken out, and not counted as a task)
local op, limit = ARGV[1], tonumber(ARGV[2])
UNIQUE = KEYS[8]
local ids, size
if op == 'purge' then
  size = llen(KEYS[9], R_READY)
  ids = rd('list', R_READY, 'lrange', KEYS[9], 0, limit - 1) or {}
else
  size = rd('zset', R_DEAD, 'zcard', DEAD) or 0
  ids = rd('zset', R_DEAD, 'zrange', DEAD, 0, limit - 1) or {}
end
local us, has = {}, {}
if op == 'requeue' then
  for _, id in ipairs(ids) do has[id] = read_requeue(id) end
elseif #ids > 0 then
  local vs = rd('hash', R_TASKS, 'hmget', TASKS, unpack(ids)) or {}
  for i, id in ipairs(ids) do
    if vs[i] then
      has[id] = true
      us[id] = read_drop(vs[i])
    end
  end
end
need(TASKS, 'hash', R_TASKS)
if BAD then return BAD end
local n = 0
if op == 'requeue' then
  for _, id in ipairs(ids) do n = n + requeue(id) end
else
  if #ids == 0 then
  elseif op == 'purge' then
    redis.call('ltrim', KEYS[9], #ids, -1)
  else
    redis.call('zremrangebyrank', DEAD, 0, #ids - 1)
  end
  for _, id in ipairs(ids) do
    if has[id] then
      drop(id, us[id])
      has[id] = false -- an ID listed twice is one task
      n = n + 1
    end
  end
end
return {n, #ids, size - #ids}
