-- page.lua: look a page up in the cache if its item is among the most
-- viewed (the book's can_cache and GET in one round trip). Read-only.
-- KEYS[1] views  ZSET item -> minus its view count (rank 0: most viewed)
-- KEYS[2] page   STRING the cached page
-- ARGV[1] item   ARGV[2] how many of the most viewed items are cacheable
-- returns {0} not cacheable, {1} cacheable but not cached, {2, page} cached
local bad = check_types({KEYS[1], 'zset', 'session view ranking', KEYS[2], 'string', 'session page'})
if bad then return bad end
local rank = redis.call('ZRANK', KEYS[1], ARGV[1])
if not rank or rank >= tonumber(ARGV[2]) then return {0} end
local page = redis.call('GET', KEYS[2])
if not page then return {1} end
return {2, page}
