-- enqueue.lua: add tasks, each ready at once (RPUSH to its queue's ready
-- list) or delayed until a due time (ZADD delayed), and wake the queues that
-- got ready tasks. All or nothing: if one custom ID is taken, nothing is
-- written. (common.lua is prepended.)
-- KEYS[1..7] the group's keys (common.lua)
-- KEYS[6+2j] ready list and KEYS[7+2j] signal list of the j-th queue named
--            by the tasks (j = 1, 2...)
-- ARGV[1] number of tasks n, then 8 fields per task: id; '1' if the ID was
--         chosen by the caller (refuse it if taken); queue name; j; task
--         name; max retries; due: 'n' now, 'd<ms>' after a delay, 'a<ms>'
--         at server Unix ms; payload
-- returns 0 enqueued, or i > 0 when the i-th task's ID is taken
local n = tonumber(ARGV[1])
for i = 1, n do
  local b = 2 + (i - 1) * 8
  if ARGV[b + 1] == '1' and redis.call('hexists', TASKS, ARGV[b] .. ':q') == 1 then
    return i
  end
end
local now
local woken = {}
for i = 1, n do
  local b = 2 + (i - 1) * 8
  local id, j, due = ARGV[b], tonumber(ARGV[b + 3]), ARGV[b + 6]
  redis.call('hset', TASKS, id .. ':p', ARGV[b + 7], id .. ':q', ARGV[b + 2], id .. ':n', ARGV[b + 4], id .. ':m', ARGV[b + 5])
  local at
  if due ~= 'n' then
    if not now then now = now_ms() end
    local ms = tonumber(string.sub(due, 2))
    if string.sub(due, 1, 1) == 'd' then at = now + ms else at = ms end
    if at <= now then at = nil end
  end
  if at then
    redis.call('zadd', DELAYED, at, id)
  else
    redis.call('rpush', KEYS[6 + 2 * j], id)
    woken[j] = true
  end
end
for j in pairs(woken) do wake(KEYS[7 + 2 * j]) end
return 0
