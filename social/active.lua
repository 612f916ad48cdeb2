-- active.lua: the end of a home timeline's regeneration: the user is fed
-- again and its reads no longer report regenerating. Naturally idempotent.
-- KEYS[1] user HASH
-- returns 1 cleared, 0 was not regenerating
local bad = check_types({KEYS[1], 'hash', 'social user'})
if bad then return bad end
if redis.call('HGET', KEYS[1], 'idle') == '2' then return redis.call('HDEL', KEYS[1], 'idle') end
return 0
