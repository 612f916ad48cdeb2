-- rowstore.lua: store a freshly loaded row and schedule its next caching
-- at now + its delay, giving it a new generation, unless the row was
-- changed since the caller picked it: its generation is no longer the one
-- the caller's peek returned (it was scheduled again, or stored by
-- another RowCacher: each gives it a new generation, never one given
-- before, so a load that began before the change is never written, however
-- the due scores meanwhile compare), it left the schedule, or its delay is
-- gone or <= 0 (it was unscheduled). A once-script: a re-send is answered
-- from the record of its first reply; run again after the record expired,
-- it finds a new generation and writes nothing. Every key is checked
-- before the first write, which is mint's INCR (a counter at its maximum
-- fails there, changing nothing). (withPeek, generation and check_rows
-- come from rowpeek.lua, mint from script.MintLua.)
-- KEYS[1] schedule  ZSET row ID -> due (Unix ms; below 0: at once)
-- KEYS[2] delay     ZSET row ID -> re-caching period (ms)
-- KEYS[3] row       STRING the row's JSON
-- KEYS[4] gen       HASH row ID -> generation
-- KEYS[5] counter   STRING the last generation minted
-- ARGV[1] row ID   ARGV[2] the generation picked ('' none)
-- ARGV[3] now (Unix ms)
-- ARGV[4] '1': write ARGV[5] (the JSON); '0': the load failed, only
--         reschedule, keeping the cached copy
-- returns {code, next row as peek}: code 1 stored, 2 rescheduled only,
-- 0 changed meanwhile (nothing written)
local schedule, delay, gen = KEYS[1], KEYS[2], KEYS[4]
local bad = check_rows(schedule, delay, gen, KEYS[3], KEYS[5])
if bad then return bad end
local id = ARGV[1]
local due = redis.call('ZSCORE', schedule, id)
local d = redis.call('ZSCORE', delay, id)
local code = 0
-- The next due time must be a time in ms: a delay beyond it (inf, 1e300,
-- not written by this package) was rescheduled at INT64_MIN, due again
-- at once.
local dn = d and tonumber(d)
if d and (not dn or dn > 0 and tonumber(ARGV[3]) + dn >= 9007199254740992) then
  return key_error('CORRUPT', delay, 'session row delays', string.format('%q', d),
    'a delay in ms such that now + delay is below 2^53')
end
if due and generation(gen, id) == ARGV[2] and d and dn > 0 then
  local g = mint(KEYS[5]) -- the first write
  code = 2
  if ARGV[4] == '1' then
    redis.call('SET', KEYS[3], ARGV[5])
    code = 1
  end
  -- ceil: a fractional delay (not written by this package) still moves the
  -- row past now
  redis.call('ZADD', schedule, string.format('%d', math.ceil(tonumber(ARGV[3]) + dn)), id)
  redis.call('HSET', gen, id, string.format('%d', g))
end
return withPeek(code, schedule, delay, gen)
