-- del.lua: delete a configuration value and tell every Store.
-- KEYS[1] value (STRING); ARGV[1] channel, ARGV[2] message. Returns 1 if it
-- existed, else 0 (Delete reports no existence flag).
-- A second run would delete another process's later Set, so this is a
-- once-script (script.NewOnce): a re-send is answered from the record of
-- the first run and neither deletes nor publishes (the first run
-- published). The type check comes before the first write: a refusal is
-- not recorded and writes nothing.
local bad = check_types({KEYS[1], 'string', 'config value'})
if bad then return bad end
local n = redis.call('del', KEYS[1])
redis.call('publish', ARGV[1], ARGV[2])
return n
