-- delete.lua: delete a counter: its known HASH (what Names and the
-- cleaners look for) and its samples, at once. Naturally idempotent.
-- KEYS[1] known HASH   KEYS[2] samples HASH
-- returns the number of keys deleted
local bad = check_types({KEYS[1], 'hash', 'counters known', KEYS[2], 'hash', 'counters samples'})
if bad then return bad end
return redis.call('DEL', KEYS[1], KEYS[2])
