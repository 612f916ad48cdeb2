-- unlisted.lua: the member's side of removing a user from a list: drop
-- the list from the member's listed set. Naturally idempotent.
-- KEYS[1] member's listed ZSET
-- ARGV[1] "<owner>/<list>"
-- returns 1 removed, 0 was not there
local bad = check_types({KEYS[1], 'zset', 'social listed'})
if bad then return bad end
return redis.call('ZREM', KEYS[1], ARGV[1])
