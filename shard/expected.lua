-- expected.lua: the visitors a day's sets are sized for, stored by the
-- first process to compute it (the book's SETNX in get_expected).
-- KEYS[1] expected STRING    ARGV[1] the size this process computed
-- returns the stored size (ARGV[1] when there was none). Idempotent.
local bad = check_int(KEYS[1], 'shard visitors expected')
if bad then return bad end
local v = redis.call('get', KEYS[1])
if v then return tonumber(v) end
redis.call('set', KEYS[1], ARGV[1])
return tonumber(ARGV[1])
