-- take.lua: one step of a worker's fetch loop. It settles the outcomes of
-- the tasks the worker finished, then takes up to k ready tasks, highest
-- priority queue first, each into inflight with a lease. It promotes due
-- delayed tasks and recovers expired leases first when asked to (a busy
-- worker asks every few tens of ms), and always when it is about to take
-- fewer than k, i.e. before the worker would wait for work.
-- (common.lua is prepended.)
-- KEYS[1..7] the group's keys (common.lua)
-- KEYS[7+j]  ready list of the j-th served queue, j = 1..n, in priority order
-- KEYS[7+n+j] signal list of the j-th served queue
-- ARGV[1] k   ARGV[2] lease ms   ARGV[3] batch: most tasks promoted, and
--         most leases recovered, per call   ARGV[4] dead limit   ARGV[5] n
-- ARGV[6] '1' to promote and recover first
-- ARGV[7..] outcomes to settle first (see settle in common.lua)
-- returns {wait, then 7 fields per task taken: id, lease token (the same
--         for every task of one take), task name, payload, failed attempts,
--         max retries, j}. wait is meaningful when fewer than k tasks were
--         taken: the ms until the earliest due time or lease deadline, -1
--         if there is none.
local now = now_ms()
local k, lease, batch, deadlimit, n =
  tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
settle(ARGV, 7, now, deadlimit)

local out = {-1}
local got = 0
local last = 0 -- the queue the last task came from
local token

-- pop takes ready tasks until it has k or the served queues are empty.
local function pop()
  for j = 1, n do
    while got < k do
      local ids = redis.call('lpop', KEYS[7 + j], k - got)
      if not ids then break end
      for _, id in ipairs(ids) do
        local f = redis.call('hmget', TASKS, id .. ':p', id .. ':n', id .. ':a', id .. ':m')
        if f[1] then
          if not token then token = redis.call('incr', SEQ) end
          redis.call('zadd', INFLIGHT, now + lease, id .. ':' .. token)
          out[#out + 1] = id
          out[#out + 1] = token
          out[#out + 1] = f[2] or ''
          out[#out + 1] = f[1]
          out[#out + 1] = f[3] or '0'
          out[#out + 1] = f[4] or '0'
          out[#out + 1] = j
          got = got + 1
          last = j
        else
          forget(id) -- no payload: a task whose fields were lost
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

if got == k then
  -- Work may be left for other idle workers: wake them (one at a time).
  -- The queues before the last one served are empty: their tokens are
  -- stale. The last one may have more; a later one has work if its list is
  -- not empty.
  for j = 1, n do
    if j == last or (j > last and redis.call('llen', KEYS[7 + j]) > 0) then
      wake(KEYS[7 + n + j])
    elseif j < last then
      redis.call('del', KEYS[7 + n + j])
    end
  end
else
  -- Every served queue is empty: their tokens are stale, and would only
  -- wake a worker for nothing.
  for j = 1, n do redis.call('del', KEYS[7 + n + j]) end
  local wait = -1
  for _, z in ipairs({DELAYED, INFLIGHT}) do
    local first = redis.call('zrange', z, 0, 0, 'WITHSCORES')
    if first[2] then
      local w = math.max(tonumber(first[2]) - now, 0)
      if wait < 0 or w < wait then wait = w end
    end
  end
  out[1] = wait
end
return out
