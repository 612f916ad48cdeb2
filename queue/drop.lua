-- drop.lua: deleting and requeueing one task, as the inspector does it,
-- shared by the scripts that do it for one task (inspect_delete.lua,
-- requeue.lua) and for a batch (inspect_bulk.lua), after lib.lua and
-- common.lua. Each step has a read half, run for every task before the
-- script's first write, and a write half.

-- read_drop reads what drop needs of a task whose packed fields are v
-- (nil or false: it has none): the holder of its unique lock. It returns
-- the task's uniqueness key (nil if none, or if v does not parse: a lock
-- whose holder is gone is free anyway).
local function read_drop(v)
  if not v then return nil end
  local _, _, _, _, u = header(v)
  read_lock(u)
  return u
end

-- drop deletes task id's fields and releases its unique lock u (read by
-- read_drop) if the task still holds it. The caller takes the ID out of
-- its list or set.
local function drop(id, u)
  forget(id)
  release(id, u)
end

-- read_requeue reads what requeue needs of dead task id (its queue and
-- the lengths of its ready and signal lists) and returns whether it has
-- fields.
local function read_requeue(id)
  return task(id) and true or false
end

-- requeue takes task id (read by read_requeue) out of the dead set and
-- puts it at the back of its queue's ready list with its failed attempts
-- and last error cleared, waking the queue's idle workers if the list was
-- empty. A dead ID without fields is deleted. It returns 1 if it
-- requeued the task, 0 if the task was not dead (or had no fields).
local function requeue(id)
  if redis.call('zrem', DEAD, id) == 0 then return 0 end
  if not HEAD[id] then
    forget(id)
    return 0
  end
  redis.call('hdel', TASKS, id .. ':a', id .. ':e')
  push(id, false)
  return 1
end
