-- enqueue.lua: add tasks, each ready at once (RPUSH to its queue's ready
-- list) or delayed until a due time (ZADD delayed), and wake the queues that
-- got ready tasks (and an idle worker, through schedule, for a due time
-- earlier than every delayed one). All or nothing: if one custom ID is
-- taken, nothing is written. (common.lua is prepended.)
-- KEYS[1..8] the group's keys (common.lua)
-- KEYS[7+2j] ready list and KEYS[8+2j] signal list of the j-th queue named
--            by the tasks (j = 1, 2...)
-- ARGV[1] number of tasks n   ARGV[2] a random nonce, new for every call
--         (not for its re-sends), then 8 fields per task: id; '1' if the ID
--         was chosen by the caller (refuse it if taken); queue name; j;
--         task name; max retries; due: 'n' now, 'd<ms>' after a delay,
--         'a<ms>' at server Unix ms; payload
-- returns 0 enqueued (or enqueued already by this call), or i > 0 when the
--         i-th task's ID is taken
local n, nonce = tonumber(ARGV[1]), ARGV[2]
-- go-redis re-sends a script whose reply was lost (the connection dropped
-- after the request): this call may have run already, and then it wrote
-- every task. A task of it that is still there, with a generated ID (a
-- random UUID: no other call has it) or with this call's nonce, tells so:
-- do nothing more.
local taken
for i = 1, n do
  local b = 3 + (i - 1) * 8
  local id = ARGV[b]
  if ARGV[b + 1] == '1' then
    local f = redis.call('hmget', TASKS, id .. ':q', id .. ':c')
    if f[2] == nonce then return 0 end
    if f[1] and not taken then taken = i end
  elseif redis.call('hexists', TASKS, id .. ':q') == 1 then
    return 0
  end
end
if taken then return taken end
local now
local woken = {}
for i = 1, n do
  local b = 3 + (i - 1) * 8
  local id, j, due = ARGV[b], tonumber(ARGV[b + 3]), ARGV[b + 6]
  redis.call('hset', TASKS, id .. ':p', ARGV[b + 7], id .. ':q', ARGV[b + 2], id .. ':n', ARGV[b + 4], id .. ':m', ARGV[b + 5])
  if ARGV[b + 1] == '1' then
    redis.call('hset', TASKS, id .. ':c', nonce)
  end
  local at
  if due ~= 'n' then
    if not now then now = now_ms() end
    local ms = tonumber(string.sub(due, 2))
    if string.sub(due, 1, 1) == 'd' then at = now + ms else at = ms end
    if at <= now then at = nil end
  end
  if at then
    delay(id, at)
  else
    redis.call('rpush', KEYS[7 + 2 * j], id)
    woken[j] = true
  end
end
for j in pairs(woken) do wake(KEYS[8 + 2 * j]) end
reschedule()
return 0
