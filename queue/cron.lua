-- cron.lua: enqueue the task of a cron schedule's scheduled time once,
-- whichever of any number of schedulers asks first (lib.lua is
-- prepended). The caller computes, from its estimate of the server's
-- clock, the last scheduled time s at or before now and the next one n;
-- the script checks them against the server's clock (s <= now < n), so
-- every scheduler enqueues by the server's clock, and the caller computes
-- again if they do not hold. The last scheduled time enqueued is kept in
-- the periodic HASH (field '<name>@cron', Unix seconds), so a time is
-- enqueued at most once, and the task and that mark are written together.
-- Naturally idempotent: a re-send finds the time marked.
-- KEYS[1] tasks HASH   KEYS[2] ready LIST of the task's queue
-- KEYS[3] signal LIST of that queue   KEYS[4] periodic HASH
-- ARGV[1] the mark's field   ARGV[2] s (Unix ms)   ARGV[3] n (Unix ms)
-- ARGV[4] the task's ID ('<name>@<s in Unix seconds>')
-- ARGV[5] the packed task, with the tick's nonce
-- ARGV[6] the tick's nonce: new for every tick, the same for its re-sends
-- returns {1 enqueued by this tick, 0 enqueued already, 2 s and n do not
--   bracket the server's clock; server now ms}; a re-send that finds the
--   time marked and its task holding the tick's nonce answers 1, as the
--   first run did; a task of the time found there already (its mark was
--   lost) answers 0
local bad = check_types({KEYS[1], 'hash', 'queue tasks', KEYS[2], 'list', 'queue ready list',
  KEYS[3], 'list', 'queue signal list', KEYS[4], 'hash', 'queue periodic marks'}) or
  check_hint(KEYS[4], ARGV[1], 'queue periodic marks')
if bad then return bad end
local now = now_ms()
local s, n = tonumber(ARGV[2]), tonumber(ARGV[3])
if now < s or now >= n then return {2, now} end
local sec = math.floor(s / 1000)
local last = tonumber(redis.call('hget', KEYS[4], ARGV[1]) or '-1')
local id = ARGV[4]
if last >= sec then
  local v = redis.call('hget', KEYS[1], id)
  local _, _, c = header(v or '')
  if c == ARGV[6] then return {1, now} end
  return {0, now}
end
local got = 1
if redis.call('hsetnx', KEYS[1], id, ARGV[5]) == 1 then
  local len = redis.call('llen', KEYS[2])
  redis.call('rpush', KEYS[2], id)
  if len == 0 and redis.call('llen', KEYS[3]) == 0 then redis.call('rpush', KEYS[3], '1') end
else
  -- The time's task is there already (its mark was lost): not this tick's
  -- doing, unless it holds the tick's nonce.
  local _, _, c = header(redis.call('hget', KEYS[1], id))
  if c ~= ARGV[6] then got = 0 end
end
redis.call('hset', KEYS[4], ARGV[1], sec)
return {got, now}
