-- common.lua: the shared part of every queue script that changes state,
-- prepended to it. Such a script's KEYS start with the group's eight keys:
--   KEYS[1] tasks     HASH '<id>:<f>' -> field f of task id: p payload,
--                     q queue, n task name, m max retries, a failed
--                     attempts, e last error, c nonce of the enqueue call
--                     (tasks with an ID chosen by the caller)
--   KEYS[2] delayed   ZSET id -> due time (server Unix ms)
--   KEYS[3] inflight  ZSET '<id>:<lease token>' -> lease deadline (server Unix ms)
--   KEYS[4] dead      ZSET id -> time of death (server Unix ms)
--   KEYS[5] seq       STRING the last lease token handed out
--   KEYS[6] ready prefix: the ready LIST of queue q is KEYS[6]..q
--   KEYS[7] signal prefix: the signal LIST of queue q is KEYS[7]..q
--   KEYS[8] schedule  LIST at most one wake token for any idle worker of
--                     the group: a due time was added that the idle
--                     workers may not know
-- A task's queue is read from tasks, so the ready and signal lists that
-- promote, recover, release and requeue push to cannot be declared in KEYS
-- beforehand: they are built from the two declared prefixes, whose {group}
-- hash tag keeps them in the slot of KEYS[1].
local TASKS, DELAYED, INFLIGHT, DEAD, SEQ, READY, SIGNAL, SCHEDULE =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]

local function now_ms()
  local t = redis.call('time')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- wake pushes a token to a signal list, unless one is pending already.
local function wake(signal)
  if redis.call('llen', signal) == 0 then
    redis.call('rpush', signal, '1')
  end
end

-- forget deletes task id.
local function forget(id)
  redis.call('hdel', TASKS, id .. ':p', id .. ':q', id .. ':n', id .. ':m', id .. ':a', id .. ':e', id .. ':c')
end

-- An idle worker blocks until the earliest due time it knows of (the
-- first of delayed when it last took tasks, or a limit). A due time added
-- later that is earlier than every one in delayed may be earlier than the
-- time every idle worker waits for: such a script wakes one idle worker
-- through SCHEDULE (reschedule), which takes again and so learns it.
local first_due -- the first due time in delayed before this script added one (false: none)
local added_due -- the earliest due time this script added

-- delay puts task id (in no list or set) into delayed, due at ms.
local function delay(id, at)
  if first_due == nil then
    local first = redis.call('zrange', DELAYED, 0, 0, 'WITHSCORES')
    first_due = first[2] and tonumber(first[2]) or false
  end
  redis.call('zadd', DELAYED, at, id)
  if not added_due or at < added_due then added_due = at end
end

-- reschedule wakes one idle worker if this script added a due time earlier
-- than every one it found in delayed.
local function reschedule()
  if added_due and (not first_due or added_due < first_due) then
    wake(SCHEDULE)
  end
end

-- bury makes task id (in no list or set) dead with error err, then drops
-- the oldest dead tasks beyond limit.
local function bury(id, now, err, limit)
  redis.call('hset', TASKS, id .. ':e', err)
  redis.call('zadd', DEAD, now, id)
  local over = redis.call('zcard', DEAD) - limit
  if over > 0 then
    local old = redis.call('zpopmin', DEAD, over)
    for i = 1, #old, 2 do forget(old[i]) end
  end
end

-- push puts task id (in no list or set) at the back of its queue's ready
-- list, or at the front, and wakes the queue. A task without a queue (its
-- fields were lost) is deleted; push then returns false.
local function push(id, front)
  local q = redis.call('hget', TASKS, id .. ':q')
  if not q then
    forget(id)
    return false
  end
  if front then
    redis.call('lpush', READY .. q, id)
  else
    redis.call('rpush', READY .. q, id)
  end
  wake(SIGNAL .. q)
  return true
end

-- promote moves up to limit due tasks from delayed to their ready lists.
local function promote(now, limit)
  local ids = redis.call('zrangebyscore', DELAYED, '-inf', now, 'LIMIT', 0, limit)
  for _, id in ipairs(ids) do
    redis.call('zrem', DELAYED, id)
    push(id, false)
  end
  return #ids
end

-- fail counts a failed attempt of task id (in no list or set) and schedules
-- its retry after backoff ms (returning true), or buries it when it has no
-- retry left or final is true.
local function fail(id, now, err, backoff, final, limit)
  local a = redis.call('hincrby', TASKS, id .. ':a', 1)
  local m = tonumber(redis.call('hget', TASKS, id .. ':m')) or 0
  if final or a > m then
    bury(id, now, err, limit)
    return false
  end
  redis.call('hset', TASKS, id .. ':e', err)
  delay(id, now + backoff)
  return true
end

-- recover takes up to limit runs whose lease has expired out of inflight:
-- each counts a failed attempt of its task, which goes back to the front of
-- its ready list, or to dead when it has no retry left.
local function recover(now, limit, deadlimit)
  local runs = redis.call('zrangebyscore', INFLIGHT, '-inf', now, 'LIMIT', 0, limit)
  for _, run in ipairs(runs) do
    redis.call('zrem', INFLIGHT, run)
    local id = string.match(run, '^(.*):%d+$')
    if id then
      local a = redis.call('hincrby', TASKS, id .. ':a', 1)
      local m = tonumber(redis.call('hget', TASKS, id .. ':m')) or 0
      if a > m then
        bury(id, now, 'lease expired', deadlimit)
      else
        redis.call('hset', TASKS, id .. ':e', 'lease expired')
        push(id, true)
      end
    end
  end
  return #runs
end

-- held takes the run of task id with lease token out of inflight: true
-- when that run still held the task.
local function held(id, token)
  return redis.call('zrem', INFLIGHT, id .. ':' .. token) == 1
end

-- settle applies the outcomes of tasks a worker ran, read from argv from
-- index i on: a count of acks, then (id, token) per ack; a count of other
-- outcomes, then (id, token, kind, backoff ms, error) per outcome, kind
-- being 'r' retry, 'd' dead now or 'l' release. An outcome whose run no
-- longer holds its task (the lease expired and the task was recovered, or
-- it was settled already) changes nothing. Returns the index after them,
-- and the number of retries scheduled.
local function settle(argv, i, now, deadlimit)
  local retries = 0
  local n = tonumber(argv[i])
  i = i + 1
  for _ = 1, n do
    if held(argv[i], argv[i + 1]) then forget(argv[i]) end
    i = i + 2
  end
  n = tonumber(argv[i])
  i = i + 1
  for _ = 1, n do
    local id, kind = argv[i], argv[i + 2]
    if held(id, argv[i + 1]) then
      if kind == 'l' then
        push(id, true)
      elseif fail(id, now, argv[i + 4], tonumber(argv[i + 3]), kind == 'd', deadlimit) then
        retries = retries + 1
      end
    end
    i = i + 5
  end
  return i, retries
end
