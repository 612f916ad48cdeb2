-- settle.lua: apply the outcomes of finished tasks (ack, retry, dead,
-- release) when no take is due to carry them: while the worker is blocked
-- waiting for work, and when it stops. A retry due before every delayed
-- task wakes an idle worker (schedule; maybe this one), which takes again
-- and so learns the new due time. A stopping worker also passes on the
-- wake tokens it may have taken without taking tasks after them: it wakes
-- each of its queues that has ready tasks, and an idle worker (schedule)
-- if tasks are delayed; and it deletes its wake list.
-- (common.lua is prepended.)
-- KEYS[1..8] the group's keys (common.lua)
-- KEYS[9] the worker's wake list (LIST)
-- KEYS[9+j] ready list and KEYS[9+n+j] signal list of the j-th queue the
--           worker serves (stopping only)
-- ARGV[1] dead limit   ARGV[2] n: the number of queues served if the
-- worker stops, else 0   ARGV[3..] outcomes (see settle in common.lua)
-- returns the number of retries scheduled
local _, retries = settle(ARGV, 3, now_ms(), tonumber(ARGV[1]))
reschedule()
local n = tonumber(ARGV[2])
if n > 0 then
  redis.call('del', KEYS[9])
  for j = 1, n do
    if redis.call('llen', KEYS[9 + j]) > 0 then wake(KEYS[9 + n + j]) end
  end
  if redis.call('zcard', DELAYED) > 0 then wake(SCHEDULE) end
end
return retries
