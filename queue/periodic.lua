-- periodic.lua: enqueue a periodic task once per period, whichever of any
-- number of schedulers asks first (lib.lua is prepended). The period is
-- read on the server's clock; the start (Unix ms) of the last period
-- enqueued is kept in the periodic HASH, so a period is enqueued at most
-- once, and the task and that mark are written together. Start times, not
-- period numbers, so that a mark compares across a change of the period
-- or offset: a period starting after the mark is enqueued. A mark written
-- before (a period number: always far below a start time in ms) counts
-- only as the current period's own number. The task's ID is
-- '<name>@<start in Unix ms>', never a period number: the number stays
-- the same across a change of the offset while the start moves, so the
-- new period's task would take the ID of the previous period's task, find
-- it still there (ready, running, dead) and skip the period. Marks only
-- grow, so a start after the mark names no task this schedule enqueued;
-- a task found under that ID is the period's own, whose mark was lost.
-- Naturally idempotent: a re-send finds the period marked.
-- KEYS[1] tasks HASH   KEYS[2] ready LIST of the task's queue
-- KEYS[3] signal LIST of that queue   KEYS[4] periodic HASH
-- ARGV[1] name   ARGV[2] period in ms   ARGV[3] offset in ms (< period)
-- ARGV[4] the packed task (see lib.lua), with the tick's nonce
-- ARGV[5] the tick's nonce: new for every tick, the same for its re-sends
-- returns {enqueued by this tick (1/0), the period's start ms (the task's
--   ID is '<name>@<it>'), next period's start ms, server now ms}; a re-send
--   that finds the period marked and its task holding the tick's nonce
--   answers 1, as the first run did; a task of the period found there
--   already (its mark was lost) answers 0
local bad = check_types({KEYS[1], 'hash', 'queue tasks', KEYS[2], 'list', 'queue ready list',
  KEYS[3], 'list', 'queue signal list', KEYS[4], 'hash', 'queue periodic marks'}) or
  check_hint(KEYS[4], ARGV[1], 'queue periodic marks')
if bad then return bad end
local now = now_ms()
local every, offset = tonumber(ARGV[2]), tonumber(ARGV[3])
local p = math.floor((now - offset) / every)
local start = p * every + offset
local nextp = start + every
local mark = redis.call('hget', KEYS[4], ARGV[1])
local last = mark and tonumber(mark) -- nil: no period marked yet
local id = ARGV[1] .. '@' .. string.format('%.0f', start)

-- ours tells whether task id holds this tick's nonce.
local function ours()
  local _, _, c = header(redis.call('hget', KEYS[1], id) or '')
  return c == ARGV[5]
end

-- An old mark holds a period number (never negative: periods before 1970
-- start below 0).
if last and (last >= start or (p >= 0 and last == p)) then
  if ours() then return {1, start, nextp, now} end
  return {0, start, nextp, now}
end
local got = 1
if redis.call('hsetnx', KEYS[1], id, ARGV[4]) == 1 then
  local n = redis.call('llen', KEYS[2])
  redis.call('rpush', KEYS[2], id)
  if n == 0 and redis.call('llen', KEYS[3]) == 0 then redis.call('rpush', KEYS[3], '1') end
elseif not ours() then
  got = 0
end
redis.call('hset', KEYS[4], ARGV[1], start)
return {got, start, nextp, now}
