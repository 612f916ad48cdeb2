-- rowdrop.lua: stop caching a scheduled row whose delay is <= 0 or
-- missing (the book's cache_rows removal): remove it from the schedule and
-- the delays and delete its cached copy, unless it was rescheduled with a
-- positive delay meanwhile. A once-script: a re-send is answered from the
-- record of its first reply (it would find the row gone and answer 0).
-- Every key is checked before the first write. (withPeek and check_rows
-- come from rowpeek.lua.)
-- KEYS[1] schedule  ZSET row ID -> due (Unix ms; below 0: at once)
-- KEYS[2] delay     ZSET row ID -> re-caching period (ms)
-- KEYS[3] row       STRING the row's JSON
-- ARGV[1] row ID
-- returns {code, next row as peek}: code 1 dropped, 0 left alone
local schedule, delay = KEYS[1], KEYS[2]
local bad = check_rows(schedule, delay, KEYS[3])
if bad then return bad end
local id = ARGV[1]
local d = redis.call('ZSCORE', delay, id)
local code = 0
if redis.call('ZSCORE', schedule, id) and (not d or tonumber(d) <= 0) then
  redis.call('ZREM', schedule, id)
  redis.call('ZREM', delay, id)
  redis.call('DEL', KEYS[3])
  code = 1
end
return withPeek(code, schedule, delay)
