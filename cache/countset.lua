-- countset.lua: set a counter to a value and renew its TTL (the blog's
-- write-back resets a counter once its count is in the system of record).
-- Naturally idempotent. A restore that is running keeps only its own n
-- (restored.lua adds to a counter that exists).
-- KEYS[1] count   ARGV[1] value   ARGV[2] ttl ms
local bad = check_types({KEYS[1], 'string', 'cache counter'})
if bad then return bad end
redis.call('set', KEYS[1], ARGV[1], 'px', ARGV[2])
return 1
