-- set.lua: store a configuration value and tell every Store of the
-- namespace. KEYS[1] value (STRING); ARGV[1] JSON, ARGV[2] channel,
-- ARGV[3] message (the value's name). Idempotent: a re-send stores the same
-- JSON and publishes again, which only refreshes caches once more.
local bad = check_types({KEYS[1], 'string', 'config value'})
if bad then return bad end
redis.call('set', KEYS[1], ARGV[1])
redis.call('publish', ARGV[2], ARGV[3])
return 1
