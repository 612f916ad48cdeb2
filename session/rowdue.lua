-- rowdue.lua: the row due first. Read-only. (withPeek and check_rows
-- come from rowpeek.lua.)
-- KEYS[1] schedule  ZSET row ID -> due (Unix ms; below 0: at once)
-- KEYS[2] delay     ZSET row ID -> re-caching period (ms)
-- KEYS[3] gen       HASH row ID -> generation
-- returns {0, id, due, delay, generation} as peek, or {0} when no row is
-- scheduled
local bad = check_rows(KEYS[1], KEYS[2], KEYS[3])
if bad then return bad end
return withPeek(0, KEYS[1], KEYS[2], KEYS[3])
