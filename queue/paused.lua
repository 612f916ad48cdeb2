-- paused.lua: the names of the group's paused queues, read-only (lib.lua
-- is prepended).
-- KEYS[1] paused SET
-- returns the names
local bad = check_types({KEYS[1], 'set', 'queue paused set'})
if bad then return bad end
return redis.call('smembers', KEYS[1])
