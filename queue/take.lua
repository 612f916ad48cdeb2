-- take.lua: one step of a worker's fetch loop. It settles the outcomes of
-- the tasks the worker finished, then takes up to k ready tasks, highest
-- priority queue first, each into inflight with a lease. It promotes due
-- delayed tasks and recovers expired leases first when asked to (a busy
-- worker asks every few tens of ms), and always when it is about to take
-- fewer than k, i.e. before the worker would wait for work.
-- (script.MintLua and common.lua are prepended.)
-- KEYS[1..8] the group's keys (common.lua)
-- KEYS[8+j]  ready list of the j-th served queue, j = 1..n, in priority order
-- KEYS[8+n+j] signal list of the j-th served queue
-- ARGV[1] k (0: only promote, recover and settle)   ARGV[2] lease ms
-- ARGV[3] batch: most tasks promoted, and most leases recovered, per call
-- ARGV[4] dead limit   ARGV[5] n   ARGV[6] '1' to promote and recover first
-- ARGV[7] '1' to return the waits even if k tasks are taken
-- ARGV[8..] outcomes to settle first (see settle in common.lua)
-- returns {wait for delayed, wait for inflight, then 7 fields per task
--         taken: id, lease token (a string of digits, the same for every
--         task of one take), task name, payload, failed attempts, max
--         retries, j}. The waits are returned when fewer than k tasks were
--         taken or ARGV[7] asks (else -1): the ms until the first due time
--         in delayed, and until the first lease deadline in inflight, -1
--         if there is none. The worker is then bound to take again by the
--         first due time (it waits for it, or promotes while busy), so
--         nobody else need be woken for a due time it knows.
local now = now_ms()
local k, lease, batch, deadlimit, n =
  tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
settle(ARGV, 8, now, deadlimit)

local out = {-1, -1}
local got = 0
local last = 0 -- the queue the last task came from
local token

-- pop takes ready tasks until it has k or the served queues are empty.
local function pop()
  for j = 1, n do
    while got < k do
      local ids = redis.call('lpop', KEYS[8 + j], k - got)
      if not ids then break end
      for _, id in ipairs(ids) do
        local f = redis.call('hmget', TASKS, id .. ':p', id .. ':n', id .. ':a', id .. ':m')
        if not f[1] then
          forget(id) -- no payload: a task whose fields were lost
        else
          if not token then token = string.format('%d', mint(SEQ)) end
          -- ZADD adds nothing if the same ID was in a ready list twice and
          -- this take popped both: hand it out once.
          if redis.call('zadd', INFLIGHT, now + lease, id .. ':' .. token) == 1 then
            out[#out + 1] = id
            out[#out + 1] = token
            out[#out + 1] = f[2] or ''
            out[#out + 1] = f[1]
            out[#out + 1] = f[3] or '0'
            out[#out + 1] = f[4] or '0'
            out[#out + 1] = j
            got = got + 1
            last = j
          end
        end
      end
    end
  end
end

local maintained = ARGV[6] == '1'
if maintained then
  promote(now, batch)
  recover(now, batch, deadlimit)
end
pop()
if got < k and not maintained then
  promote(now, batch)
  recover(now, batch, deadlimit)
  pop()
end

if got < k then
  -- Every served queue is empty: their tokens are stale, and would only
  -- wake a worker for nothing.
  for j = 1, n do redis.call('del', KEYS[8 + n + j]) end
elseif k > 0 then
  -- Work may be left for other idle workers: wake them (one at a time).
  -- The queues before the last one served are empty: their tokens are
  -- stale. The last one and the later ones have work if their list is not
  -- empty.
  for j = 1, n do
    if j >= last and redis.call('llen', KEYS[8 + j]) > 0 then
      wake(KEYS[8 + n + j])
    else
      redis.call('del', KEYS[8 + n + j])
    end
  end
end

if got < k or ARGV[7] == '1' then
  -- This worker learns every due time: a pending schedule token is stale.
  redis.call('del', SCHEDULE)
  for i, z in ipairs({DELAYED, INFLIGHT}) do
    local first = redis.call('zrange', z, 0, 0, 'WITHSCORES')
    if first[2] then out[i] = math.max(tonumber(first[2]) - now, 0) end
  end
else
  reschedule()
end
return out
