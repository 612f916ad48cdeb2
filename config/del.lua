-- del.lua: delete a configuration value and tell every Store.
-- KEYS[1] value (STRING); ARGV[1] channel, ARGV[2] message. Returns 1 if it
-- existed; a re-send after a lost reply answers 0, so Delete reports no
-- existence flag.
local bad = check_types({KEYS[1], 'string', 'config value'})
if bad then return bad end
local n = redis.call('del', KEYS[1])
redis.call('publish', ARGV[1], ARGV[2])
return n
