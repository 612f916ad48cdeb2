-- set.lua: store a configuration value and tell every Store of the
-- namespace. KEYS[1] value (STRING); ARGV[1] JSON, ARGV[2] channel,
-- ARGV[3] message (the value's name). Returns 1.
-- A second run would put this JSON back over another process's later Set
-- or Delete, so this is a once-script (script.NewOnce): a re-send is
-- answered from the record of the first run and neither writes nor
-- publishes (the first run published). The type check comes before the
-- first write: a refusal is not recorded and writes nothing.
local bad = check_types({KEYS[1], 'string', 'config value'})
if bad then return bad end
redis.call('set', KEYS[1], ARGV[1])
redis.call('publish', ARGV[2], ARGV[3])
return 1
