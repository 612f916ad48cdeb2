-- common.lua: the shared part of the queue scripts that move tasks between
-- the group's lists and sets (after lib.lua). Their KEYS start with:
--   KEYS[1] tasks     HASH of the tasks (see lib.lua)
--   KEYS[2] delayed   ZSET id -> due time (server Unix ms)
--   KEYS[3] inflight  ZSET '<id>:<lease token>' -> lease deadline (server Unix ms)
--   KEYS[4] dead      ZSET id -> time of death (server Unix ms)
--   KEYS[5] ready prefix: the ready LIST of queue q is KEYS[5]..q
--   KEYS[6] signal prefix: the signal LIST of queue q is KEYS[6]..q
--   KEYS[7] schedule  LIST at most one wake token for any idle worker of the
--                     group: a due time was added that the idle workers may
--                     not know
-- A task's queue is read from tasks, so the ready and signal lists that
-- promote, recover, release and requeue push to cannot be declared in KEYS
-- beforehand: they are built from the two declared prefixes, whose {group}
-- hash tag keeps them in the slot of KEYS[1]. They are read (and so
-- checked) before any write, like every other key.
local TASKS, DELAYED, INFLIGHT, DEAD, READY, SIGNAL, SCHEDULE =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local R_TASKS, R_DELAYED, R_INFLIGHT, R_DEAD = 'queue tasks', 'queue delayed set', 'queue in-flight set', 'queue dead set'
local R_READY, R_SIGNAL, R_SCHEDULE = 'queue ready list', 'queue signal list', 'queue schedule list'
local R_UNIQUE = 'queue unique lock'

-- UNIQUE is the prefix of the unique locks: the lock of uniqueness key u
-- is the STRING UNIQUE..u, holding the ID of the task that holds it. A
-- script that may finish a unique task (ack, dead, cancel) sets it from
-- its KEYS; the others leave it nil, and never release a lock.
local UNIQUE
local LOCKS = {} -- uniqueness key -> its lock's holder, read before the writes (false: none)

-- read_lock reads the holder of the lock of uniqueness key u (if any).
local function read_lock(u)
  if u and u ~= '' and UNIQUE and LOCKS[u] == nil then
    LOCKS[u] = rd('string', R_UNIQUE, 'get', UNIQUE .. u) or false
  end
end

-- release deletes the lock of uniqueness key u (read by read_lock) if task
-- id still holds it: a lock that expired and was taken by a later task is
-- that task's.
local function release(id, u)
  if u and u ~= '' and UNIQUE and LOCKS[u] == id then
    redis.call('del', UNIQUE .. u)
    LOCKS[u] = false
  end
end

local HEAD = {} -- id -> {q =, m =, a =, u =} of a task read by task() (false: it has no fields)

-- task reads task id: its queue q, max retries m, uniqueness key u (nil if
-- none) and, with attempts, its failed attempts a (an integer, or the task
-- is corrupt); and the lengths
-- of its queue's ready and signal lists, which a push needs. It returns
-- false for a task whose fields are gone. A task whose fields do not parse
-- is an error (BAD), unless soft: then its h.bad says why (the scripts
-- that promote and recover send such a task to the dead letters rather
-- than stop every take of the group).
local function task(id, attempts, soft)
  local h = HEAD[id]
  if h == nil then
    h = false
    local f = rd('hash', R_TASKS, 'hmget', TASKS, id, id .. ':a')
    if f and f[1] then
      local q, m, _, _, u = header(f[1])
      if not q then
        h = {bad = {id, f[1], 'a packed task'}}
      else
        h = {q = q, m = m, a = 0, ra = f[2], u = u}
        llen(READY .. q, R_READY)
        llen(SIGNAL .. q, R_SIGNAL)
      end
    end
    HEAD[id] = h
  end
  if h and attempts and h.ra and not h.bad and not h.ar then
    h.ar = true
    -- A count Lua's numbers hold: one beyond 2^53 would be written back
    -- rounded (smaller, or as '1e+20').
    if string.match(h.ra, '^%d+$') and is_count(h.ra) then
      h.a = tonumber(h.ra)
    else
      h.bad = {id .. ':a', h.ra, 'an integer from 0 to 2^53'}
    end
  end
  if h and h.bad and not soft then corrupt(TASKS, R_TASKS, h.bad[1], h.bad[2], h.bad[3]) end
  return h
end

-- corrupt_text is the last error of a task sent to the dead letters
-- because its fields (h.bad) do not parse.
local function corrupt_text(h)
  return string.format('queue: corrupt task: field %s holds %q, want %s', h.bad[1], string.sub(h.bad[2], 1, 40), h.bad[3])
end

-- forget deletes task id.
local function forget(id)
  redis.call('hdel', TASKS, id, id .. ':a', id .. ':e')
end

-- push puts task id (read by task, in no list or set) at the back of its
-- queue's ready list, or at the front, and wakes the queue's idle workers
-- if the list was empty. (A list that was not empty has a wake token
-- pending, or a worker that took one is about to take, and wakes the next
-- one if it leaves tasks behind.)
local function push(id, front)
  local q = HEAD[id].q
  local key = READY .. q
  local was = LEN[key]
  redis.call(front and 'lpush' or 'rpush', key, id)
  LEN[key] = was + 1
  if was == 0 then wake(SIGNAL .. q) end
end

-- An idle worker blocks until the earliest due time it knows of (the
-- first of delayed when it last took tasks, or a limit). A due time added
-- later that is earlier than every one in delayed may be earlier than the
-- time every idle worker waits for: such a script wakes one idle worker
-- through SCHEDULE (reschedule), which takes again and so learns it.
local first_due -- the first due time in delayed before the writes (false: none)
local added_due -- the earliest due time this script added

-- read_delayed reads the first due time and the schedule list.
local function read_delayed()
  if first_due == nil then
    local f = rd('zset', R_DELAYED, 'zrange', DELAYED, 0, 0, 'WITHSCORES')
    first_due = f and f[2] and tonumber(f[2]) or false
    llen(SCHEDULE, R_SCHEDULE)
  end
end

-- delay puts task id (in no list or set) into delayed, due at ms.
local function delay(id, at)
  redis.call('zadd', DELAYED, at, id)
  if not added_due or at < added_due then added_due = at end
end

-- reschedule wakes one idle worker if this script added a due time earlier
-- than every one it found in delayed.
local function reschedule()
  if added_due and (not first_due or added_due < first_due) then wake(SCHEDULE) end
end

local DEADN -- the number of dead tasks

local function read_dead()
  if DEADN == nil then DEADN = rd('zset', R_DEAD, 'zcard', DEAD) or 0 end
end

-- bury makes task id (in no list or set) dead with error err (and attempts
-- failed attempts, unless nil), then deletes the oldest dead tasks beyond
-- limit.
local function bury(id, now, err, attempts, limit)
  if attempts then
    redis.call('hset', TASKS, id .. ':e', err, id .. ':a', attempts)
  else
    redis.call('hset', TASKS, id .. ':e', err)
  end
  DEADN = DEADN + redis.call('zadd', DEAD, now, id)
  local over = DEADN - limit
  if over > 0 then
    local old = redis.call('zpopmin', DEAD, over)
    for i = 1, #old, 2 do forget(old[i]) end
    DEADN = DEADN - #old / 2
  end
end

-- read_outcomes reads the outcomes of tasks a worker ran from argv, from
-- index i on: a count of acks, then (id, token, uniqueness key) per ack; a
-- count of other outcomes, then (id, token, kind, attempts, backoff ms,
-- error, uniqueness key) per outcome, kind being 'r' retry, 'd' dead or
-- 'l' release (attempts: the failed attempts to record, '' to leave them;
-- uniqueness key: '' for a task without one). It reads what settling them
-- needs and returns them and the index after them.
local function read_outcomes(argv, i)
  local os = {acks = {}, others = {}}
  local n = tonumber(argv[i])
  i = i + 1
  for _ = 1, n do
    os.acks[#os.acks + 1] = argv[i] .. ':' .. argv[i + 1]
    os.acks[#os.acks + 1] = argv[i]
    os.acks[#os.acks + 1] = argv[i + 2]
    read_lock(argv[i + 2])
    i = i + 3
  end
  n = tonumber(argv[i])
  i = i + 1
  for _ = 1, n do
    local o = {id = argv[i], run = argv[i] .. ':' .. argv[i + 1], kind = argv[i + 2], a = argv[i + 3],
      backoff = tonumber(argv[i + 4]), err = argv[i + 5], u = argv[i + 6]}
    os.others[#os.others + 1] = o
    if o.kind == 'l' then
      task(o.id)
    elseif o.kind == 'r' then
      read_delayed()
    else
      read_dead()
      read_lock(o.u)
    end
    i = i + 7
  end
  if n > 0 or #os.acks > 0 then
    need(INFLIGHT, 'zset', R_INFLIGHT)
    need(TASKS, 'hash', R_TASKS)
  end
  return os, i
end

-- settle applies outcomes read by read_outcomes. An outcome whose run no
-- longer holds its task (the lease expired and the task was recovered, or
-- it was settled already: a re-send) changes nothing.
local function settle(os, now, limit)
  for i = 1, #os.acks, 3 do
    if redis.call('zrem', INFLIGHT, os.acks[i]) == 1 then
      forget(os.acks[i + 1])
      release(os.acks[i + 1], os.acks[i + 2])
    end
  end
  for _, o in ipairs(os.others) do
    if redis.call('zrem', INFLIGHT, o.run) == 1 then
      if o.kind == 'l' then
        if HEAD[o.id] then push(o.id, true) else forget(o.id) end
      elseif o.kind == 'r' then
        redis.call('hset', TASKS, o.id .. ':a', o.a, o.id .. ':e', o.err)
        delay(o.id, now + o.backoff)
      else
        bury(o.id, now, o.err, o.a ~= '' and o.a or nil, limit)
        release(o.id, o.u)
      end
    end
  end
end

-- read_promote reads up to limit due tasks of delayed.
local function read_promote(now, limit)
  local ids = rd('zset', R_DELAYED, 'zrangebyscore', DELAYED, '-inf', now, 'LIMIT', 0, limit) or {}
  for _, id in ipairs(ids) do
    local h = task(id, false, true)
    if h and h.bad then read_dead() end
  end
  return ids
end

-- promote moves the tasks read by read_promote to their ready lists (one
-- whose fields do not parse to dead, unrun), and returns how many it
-- moved.
local function promote(ids, now, limit)
  local n = 0
  for _, id in ipairs(ids) do
    if redis.call('zrem', DELAYED, id) == 1 then
      n = n + 1
      local h = HEAD[id]
      if not h then
        forget(id)
      elseif h.bad then
        bury(id, now, corrupt_text(h), nil, limit)
      else
        push(id, false)
      end
    end
  end
  return n
end

-- read_recover reads up to limit runs of inflight whose lease has expired.
local function read_recover(now, limit)
  local runs = rd('zset', R_INFLIGHT, 'zrangebyscore', INFLIGHT, '-inf', now, 'LIMIT', 0, limit) or {}
  local plan = {}
  for _, run in ipairs(runs) do
    local id = string.match(run, '^(.*):[^:]*$')
    local h = id and task(id, true, true)
    if h and (h.bad or h.a + 1 > h.m) then
      read_dead()
      read_lock(h.u)
    end
    plan[#plan + 1] = {run, id}
  end
  if #plan > 0 then need(TASKS, 'hash', R_TASKS) end
  return plan
end

-- recover takes the runs read by read_recover out of inflight: each counts
-- a failed attempt of its task, which goes back to the front of its ready
-- list, or to dead when it has no retry left or its fields do not parse.
-- Returns how many it took.
local function recover(plan, now, limit)
  local n = 0
  for _, p in ipairs(plan) do
    local id = p[2]
    if redis.call('zrem', INFLIGHT, p[1]) == 1 then
      n = n + 1
      local h = id and HEAD[id]
      if id and not h then
        forget(id)
      elseif h and h.bad then
        bury(id, now, 'lease expired; ' .. corrupt_text(h), nil, limit)
        release(id, h.u)
      elseif h then
        h.a = h.a + 1
        if h.a > h.m then
          bury(id, now, 'lease expired', h.a, limit)
          release(id, h.u)
        else
          redis.call('hset', TASKS, id .. ':a', h.a, id .. ':e', 'lease expired')
          push(id, true)
        end
      end
    end
  end
  return n
end
