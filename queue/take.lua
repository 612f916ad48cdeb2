-- take.lua: one step of a worker's fetch loop. It settles the outcomes of
-- the tasks the worker finished, then takes up to k ready tasks, highest
-- priority queue first, each into inflight with a lease. It promotes due
-- delayed tasks and recovers expired leases first when asked to (a busy
-- worker asks every few tens of ms), and always when its queues hold fewer
-- than k tasks, i.e. before the worker would wait for work.
-- (lib.lua and common.lua are prepended.)
-- KEYS[1..7] the group's keys (common.lua)
-- KEYS[8] the worker's take record (STRING): its last take's token and the
--         IDs it took
-- KEYS[9] unique lock prefix (see common.lua)
-- KEYS[10] paused SET: the names of the group's paused queues
-- KEYS[10+j]  ready list of the j-th served queue, j = 1..n, in priority order
-- KEYS[10+n+j] signal list of the j-th served queue
--
-- A paused queue is skipped: none of its tasks is taken, and its wake
-- token is deleted rather than passed on, so that its ready tasks wake no
-- worker again until Resume pushes one.
-- ARGV[1] k (0: only promote, recover and settle)   ARGV[2] lease ms
-- ARGV[3] batch: most tasks promoted, and most leases recovered, per call
-- ARGV[4] dead limit   ARGV[5] n   ARGV[6] '1' to promote and recover first
-- ARGV[7] '1' to return the waits even if k tasks are taken
-- ARGV[8] the lease token of this take: new for every take, the same for
--         its re-sends (a string of letters, digits and dots)
-- ARGV[9..] outcomes to settle first (see read_outcomes in common.lua)
-- returns {wait for delayed, wait for inflight, then 4 fields per task
--         taken: id, packed task (see lib.lua), failed attempts, j}. The
--         waits are returned when fewer than k tasks were taken or ARGV[7]
--         asks (else -1): the ms until the first due time in delayed, and
--         until the first lease deadline in inflight, -1 if there is none.
--         The worker is then bound to take again by the first due time (it
--         waits for it, or promotes while busy), so nobody else need be
--         woken for a due time it knows.
--
-- A take whose reply was lost is re-sent by go-redis, or again by the
-- worker with the same token: the record tells, and the re-send hands out
-- the tasks the first run took (those it still holds) instead of taking
-- more, so none of them waits unseen for its lease to expire.
local now = now_ms()
local k, lease, batch, limit, n =
  tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local tok, RECORD = ARGV[8], KEYS[8]
local asked = ARGV[7] == '1'
UNIQUE = KEYS[9]

-- Read and check.
local os = read_outcomes(ARGV, 9)
local rec = rd('string', 'queue take record', 'get', RECORD)
local again = rec and string.sub(rec, 1, #tok + 1) == tok .. '\n'
local paused = {} -- ready list key -> true for a paused queue
for _, q in ipairs(rd('set', 'queue paused set', 'smembers', KEYS[10]) or {}) do paused[READY .. q] = true end
local have = 0 -- ready tasks in the served queues that are not paused
for j = 1, n do
  local len = llen(KEYS[10 + j], R_READY)
  if not paused[KEYS[10 + j]] then have = have + len end
  llen(KEYS[10 + n + j], R_SIGNAL)
end
local maintain = not again and (ARGV[6] == '1' or have < k)
local due, expired
if maintain then
  due = read_promote(now, batch)
  expired = read_recover(now, batch)
end
need(INFLIGHT, 'zset', R_INFLIGHT)
need(TASKS, 'hash', R_TASKS)
if maintain or asked then llen(SCHEDULE, R_SCHEDULE) end
if BAD then return BAD end

-- Write.
settle(os, now, limit)
local out = {-1, -1}
local got = 0
if again then
  local i = #tok + 2
  while true do
    local _, e, j, len = string.find(rec, '^(%d+):(%d+):', i)
    if not e then break end
    local id = string.sub(rec, e + 1, e + len)
    i = e + len + 1
    if redis.call('zscore', INFLIGHT, id .. ':' .. tok) then
      local f = redis.call('hmget', TASKS, id, id .. ':a')
      if f[1] then
        out[#out + 1] = id
        out[#out + 1] = f[1]
        out[#out + 1] = f[2] or '0'
        out[#out + 1] = tonumber(j)
        got = got + 1
      end
    end
  end
else
  if maintain then
    promote(due, now, limit)
    recover(expired, now, limit)
  end
  local took = {}
  for j = 1, n do
    local key = KEYS[10 + j]
    while got < k and LEN[key] > 0 and not paused[key] do
      local ids = redis.call('lpop', key, math.min(k - got, LEN[key]))
      if not ids then
        LEN[key] = 0
        break
      end
      LEN[key] = LEN[key] - #ids
      for _, id in ipairs(ids) do
        local f = redis.call('hmget', TASKS, id, id .. ':a')
        if not f[1] then
          forget(id) -- a task whose fields were lost
        -- ZADD adds nothing if the same ID was in a ready list twice and
        -- this take popped both: hand it out once.
        elseif redis.call('zadd', INFLIGHT, now + lease, id .. ':' .. tok) == 1 then
          out[#out + 1] = id
          out[#out + 1] = f[1]
          out[#out + 1] = f[2] or '0'
          out[#out + 1] = j
          got = got + 1
          took[#took + 1] = j .. ':' .. #id .. ':' .. id
        end
      end
    end
  end
  if k > 0 then
    -- Wake the next idle worker of each served queue that still has tasks
    -- (one at a time); the tokens of the empty and paused ones are stale.
    for j = 1, n do
      local key = KEYS[10 + j]
      if LEN[key] > 0 and not paused[key] then wake(KEYS[10 + n + j]) else unwake(KEYS[10 + n + j]) end
    end
  end
  if got > 0 then
    redis.call('set', RECORD, tok .. '\n' .. table.concat(took), 'PX', lease)
  end
end

if got < k or asked then
  -- This worker learns every due time: a pending schedule token is stale.
  if LEN[SCHEDULE] then unwake(SCHEDULE) end
  for i, z in ipairs({DELAYED, INFLIGHT}) do
    local first = redis.pcall('zrange', z, 0, 0, 'WITHSCORES')
    if not first.err and first[2] then out[i] = math.max(tonumber(first[2]) - now, 0) end
  end
else
  reschedule()
end
return out
