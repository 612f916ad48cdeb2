-- settle.lua: apply the outcomes of finished tasks (ack, retry, dead,
-- release) when no take is due to carry them: while the worker is blocked
-- waiting for work, and when it stops. A retry due before every delayed
-- task wakes an idle worker (schedule; maybe this one), which takes again
-- and so learns the new due time. A stopping worker also passes on the
-- wake tokens it may have taken without taking tasks after them: it wakes
-- each of its queues that has ready tasks, and an idle worker (schedule)
-- if tasks are delayed; and it deletes its take record and wake list.
-- Settling twice (a re-send) changes nothing more.
-- (lib.lua and common.lua are prepended.)
-- KEYS[1..7] the group's keys (common.lua)
-- KEYS[8] the worker's take record (STRING)   KEYS[9] its wake list (LIST)
-- KEYS[10] unique lock prefix (see common.lua)
-- KEYS[10+j] ready list and KEYS[10+n+j] signal list of the j-th queue the
--           worker serves (stopping only)
-- ARGV[1] dead limit   ARGV[2] n: the number of queues served if the
-- worker stops, else 0   ARGV[3..] outcomes (see read_outcomes in common.lua)
-- returns 1
local limit, n = tonumber(ARGV[1]), tonumber(ARGV[2])
UNIQUE = KEYS[10]
local os = read_outcomes(ARGV, 3)
if n > 0 then
  need(KEYS[8], 'string', 'queue take record')
  need(KEYS[9], 'list', 'queue wake list')
  for j = 1, n do
    llen(KEYS[10 + j], R_READY)
    llen(KEYS[10 + n + j], R_SIGNAL)
  end
  read_delayed()
end
if BAD then return BAD end

settle(os, now_ms(), limit)
reschedule()
if n > 0 then
  redis.call('del', KEYS[8], KEYS[9])
  for j = 1, n do
    if LEN[KEYS[10 + j]] > 0 then wake(KEYS[10 + n + j]) end
  end
  if first_due or added_due then wake(SCHEDULE) end
end
return 1
