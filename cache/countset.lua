-- countset.lua: set a counter to a value and renew its TTL (the blog's
-- write-back resets a counter once its count is in the system of record).
-- Run as a once-script: a re-send is answered from the first run's record
-- instead of setting the value again, which would undo an Incr made
-- between the two runs. The type is checked before the only write, so a
-- refusal writes nothing (and is not recorded). A restore that is running keeps only its own n
-- (restored.lua adds to a counter that exists).
-- KEYS[1] count   ARGV[1] value   ARGV[2] ttl ms
local bad = check_types({KEYS[1], 'string', 'cache counter'})
if bad then return bad end
redis.call('set', KEYS[1], ARGV[1], 'px', ARGV[2])
return 1
