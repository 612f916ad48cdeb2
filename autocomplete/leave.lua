-- leave.lua: remove names from a member set (Redis in Action 6.1.2,
-- leave_guild). Naturally idempotent.
-- KEYS[1] members  ZSET
-- ARGV    the members to remove
-- returns how many were there
local bad = check_types({KEYS[1], 'zset', 'autocomplete members'})
if bad then return bad end
return redis.call('ZREM', KEYS[1], unpack(ARGV))
