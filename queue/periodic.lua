-- periodic.lua: enqueue a periodic task once per period, whichever of any
-- number of schedulers asks first (lib.lua is prepended). The period is
-- read on the server's clock; the last period enqueued is kept in the
-- periodic HASH, so a period is enqueued at most once, and the task and
-- that mark are written together. Naturally idempotent: a re-send finds
-- the period marked.
-- KEYS[1] tasks HASH   KEYS[2] ready LIST of the task's queue
-- KEYS[3] signal LIST of that queue   KEYS[4] periodic HASH
-- ARGV[1] name   ARGV[2] period in ms   ARGV[3] offset in ms (< period)
-- ARGV[4] the packed task (see lib.lua), with the tick's nonce
-- ARGV[5] the tick's nonce: new for every tick, the same for its re-sends
-- returns {enqueued by this tick (1/0), period number, next period's start
--   ms, server now ms}; a re-send that finds the period marked and its
--   task holding the tick's nonce answers 1, as the first run did
local bad = check_types({KEYS[1], 'hash', 'queue tasks', KEYS[2], 'list', 'queue ready list',
  KEYS[3], 'list', 'queue signal list', KEYS[4], 'hash', 'queue periodic marks'}) or
  check_hint(KEYS[4], ARGV[1], 'queue periodic marks')
if bad then return bad end
local now = now_ms()
local every, offset = tonumber(ARGV[2]), tonumber(ARGV[3])
local p = math.floor((now - offset) / every)
local nextp = (p + 1) * every + offset
local last = tonumber(redis.call('hget', KEYS[4], ARGV[1]) or '-1')
local id = ARGV[1] .. '@' .. p
if last >= p then
  local v = redis.call('hget', KEYS[1], id)
  local _, _, c = header(v or '')
  if c == ARGV[5] then return {1, p, nextp, now} end
  return {0, p, nextp, now}
end
if redis.call('hsetnx', KEYS[1], id, ARGV[4]) == 1 then
  local n = redis.call('llen', KEYS[2])
  redis.call('rpush', KEYS[2], id)
  if n == 0 and redis.call('llen', KEYS[3]) == 0 then redis.call('rpush', KEYS[3], '1') end
end
redis.call('hset', KEYS[4], ARGV[1], p)
return {1, p, nextp, now}
