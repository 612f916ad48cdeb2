-- rowdrop.lua: stop caching a scheduled row whose delay is <= 0 or
-- missing (the book's cache_rows removal; this package never leaves one,
-- another writer may, such as the book's schedule_row_cache with -1):
-- remove it from the schedule, the delays and the generations and delete
-- its cached copy, unless it was changed since the caller picked it (its
-- generation is no longer the one the caller's peek returned: it was
-- scheduled again, or dropped and scheduled again) or it was given a
-- positive delay meanwhile. A once-script: a re-send is answered from the
-- record of its first reply (it would find the row gone and answer 0).
-- Every key is checked before the first write. (withPeek, generation and
-- check_rows come from rowpeek.lua.)
-- KEYS[1] schedule  ZSET row ID -> due (Unix ms; below 0: at once)
-- KEYS[2] delay     ZSET row ID -> re-caching period (ms)
-- KEYS[3] row       STRING the row's JSON
-- KEYS[4] gen       HASH row ID -> generation
-- ARGV[1] row ID   ARGV[2] the generation picked ('' none)
-- returns {code, next row as peek}: code 1 dropped, 0 left alone
local schedule, delay, gen = KEYS[1], KEYS[2], KEYS[4]
local bad = check_rows(schedule, delay, gen, KEYS[3])
if bad then return bad end
local id = ARGV[1]
local d = redis.call('ZSCORE', delay, id)
local code = 0
if redis.call('ZSCORE', schedule, id) and generation(gen, id) == ARGV[2]
    and (not d or tonumber(d) <= 0) then
  redis.call('ZREM', schedule, id)
  redis.call('ZREM', delay, id)
  redis.call('HDEL', gen, id)
  redis.call('DEL', KEYS[3])
  code = 1
end
return withPeek(code, schedule, delay, gen)
