-- enqueue.lua: add tasks, each ready at once (RPUSH to its queue's ready
-- list) or delayed until a due time (ZADD delayed); wake the idle workers
-- of a queue whose ready list was empty, and one idle worker of the group
-- (schedule) for a due time earlier than every delayed one; take the
-- unique lock of each unique task. All or nothing: if one ID given by the
-- caller is taken, or one uniqueness key is held, nothing is written.
-- (lib.lua is prepended.)
-- KEYS[1] tasks HASH   KEYS[2] delayed ZSET   KEYS[3] schedule LIST
-- KEYS[4] unique lock prefix: the lock of uniqueness key u is the STRING
--         KEYS[4]..u, holding the ID of the task that holds it
-- KEYS[3+2j] ready LIST and KEYS[4+2j] signal LIST of the j-th queue named
--            by the tasks (j = 1, 2...)
-- ARGV[1] n, the number of tasks   ARGV[2] the call's nonce, new for every
--         call (not for its re-sends), if an ID is the caller's (else '')
-- then 7 per task: id; '1' if the caller chose the ID (refuse it if
--         taken); j; due: '' now, 'd<ms>' after a delay, 'a<ms>' at server
--         Unix ms; the packed task (see lib.lua); its uniqueness key ('' if
--         none); the unique lock's TTL in ms
-- returns 0 enqueued (or enqueued already by this call), i > 0 when the
--         i-th task's ID is taken, or {i, holder} when the i-th task's
--         uniqueness key is held by the unfinished task holder
--
-- go-redis re-sends a script whose reply was lost (the connection dropped
-- after the request): this call may have run already, and then it wrote
-- every task. A task of it that is still there, with a generated ID (a
-- random UUID: no other call has it) or with this call's nonce, tells so:
-- then it does nothing more. With one task that is not unique, the HSETNX
-- that writes it is that check; a unique task is checked first, since the
-- lock it took may have expired and been taken by another task since.
--
-- A lock whose holder is no longer in tasks (deleted by a script that
-- does not release locks) is free: it is taken over.
local TASKS, DELAYED, SCHEDULE, UNIQUE = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local R_TASKS = 'queue tasks'
local W = 7 -- arguments per task
local n, nonce = tonumber(ARGV[1]), ARGV[2]
local uniq = false
for i = 1, n do
  if ARGV[3 + (i - 1) * W + 5] ~= '' then
    uniq = true
    break
  end
end

if n > 1 or uniq then
  local taken
  for i = 1, n do
    local b = 3 + (i - 1) * W
    local id = ARGV[b]
    if ARGV[b + 1] == '1' then
      local v = rd('hash', R_TASKS, 'hget', TASKS, id)
      if v then
        local _, _, c = header(v)
        if c == nonce then return 0 end
        taken = taken or i
      end
    elseif rd('hash', R_TASKS, 'hexists', TASKS, id) == 1 then
      return 0
    end
  end
  if BAD then return BAD end
  if taken then return taken end
end

local held -- {i, holder} of the first task whose uniqueness key is held
if uniq then
  for i = 1, n do
    local b = 3 + (i - 1) * W
    local u = ARGV[b + 5]
    if u ~= '' then
      local holder = rd('string', 'queue unique lock', 'get', UNIQUE .. u)
      if holder and holder ~= ARGV[b] and not held and rd('hash', R_TASKS, 'hexists', TASKS, holder) == 1 then
        held = {i, holder}
      end
    end
  end
end

local now
local lists, order = {}, {} -- j -> IDs that go to the j-th queue's ready list; the js in order
local delayed = {}          -- due time, id, ... for ZADD
local first                 -- the earliest due time of these tasks
for i = 1, n do
  local b = 3 + (i - 1) * W
  local due, at = ARGV[b + 3], nil
  if due ~= '' then
    now = now or now_ms()
    local ms = tonumber(string.sub(due, 2))
    if string.sub(due, 1, 1) == 'd' then at = now + ms else at = ms end
    if at <= now then at = nil end
  end
  if at then
    delayed[#delayed + 1] = at
    delayed[#delayed + 1] = ARGV[b]
    if not first or at < first then first = at end
  else
    local j = tonumber(ARGV[b + 2])
    if not lists[j] then
      lists[j] = {}
      order[#order + 1] = j
      if llen(KEYS[3 + 2 * j], 'queue ready list') == 0 then llen(KEYS[4 + 2 * j], 'queue signal list') end
    end
    local l = lists[j]
    l[#l + 1] = ARGV[b]
  end
end
if first then
  local f = rd('zset', 'queue delayed set', 'zrange', DELAYED, 0, 0, 'WITHSCORES')
  if f and f[2] and tonumber(f[2]) <= first then
    first = nil -- whoever waits for the earlier one learns these
  else
    llen(SCHEDULE, 'queue schedule list')
  end
end
if BAD then return BAD end
if held then return held end

if n == 1 then
  local r = redis.pcall('hsetnx', TASKS, ARGV[3], ARGV[7])
  if type(r) == 'table' then
    if string.sub(r.err, 1, 9) == 'WRONGTYPE' then wrong(TASKS, 'hash', R_TASKS) return BAD end
    return r
  end
  if r == 0 then
    if ARGV[4] == '1' then
      local _, _, c = header(redis.call('hget', TASKS, ARGV[3]))
      if c ~= nonce then return 1 end
    end
    return 0
  end
else
  local fields = {}
  for i = 1, n do
    local b = 3 + (i - 1) * W
    fields[#fields + 1] = ARGV[b]
    fields[#fields + 1] = ARGV[b + 4]
  end
  chunked('hset', TASKS, fields)
end
for _, j in ipairs(order) do
  local key = KEYS[3 + 2 * j]
  local was = LEN[key]
  chunked('rpush', key, lists[j])
  LEN[key] = was + #lists[j]
  if was == 0 then wake(KEYS[4 + 2 * j]) end
end
if uniq then
  for i = 1, n do
    local b = 3 + (i - 1) * W
    if ARGV[b + 5] ~= '' then redis.call('set', UNIQUE .. ARGV[b + 5], ARGV[b], 'PX', ARGV[b + 6]) end
  end
end
if #delayed > 0 then chunked('zadd', DELAYED, delayed) end
if first then wake(SCHEDULE) end
return 0
