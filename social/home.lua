-- home.lua: the first read of a page of a home timeline when inactive
-- users are not fed (WithInactiveAfter), where page.lua does not run (a
-- Cluster, or a status cache): note that the user is active, and read the
-- page's IDs, or report that the timeline is being regenerated.
-- (home_seen and home_seen_write come from seen.lua.)
-- KEYS[1] user HASH   KEYS[2] home ZSET
-- ARGV[1] start   ARGV[2] stop   ARGV[3] how old (ms) a recorded read may
-- be before this one is recorded
-- returns {0, id...} a page, {1} the timeline is being regenerated (the
-- caller enqueues its regeneration)
local regen, due = home_seen(KEYS[1], KEYS[2], tonumber(ARGV[3]))
if type(regen) == 'table' then return regen end
home_seen_write(KEYS[1], regen, due)
if regen then return {1} end
local out = {0}
for _, id in ipairs(redis.call('ZREVRANGE', KEYS[2], ARGV[1], ARGV[2])) do out[#out + 1] = id end
return out
