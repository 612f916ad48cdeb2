-- delete.lua: delete a counter: its known HASH (what Names and the
-- cleaners look for) and its samples, at once. A once-script (once.lua):
-- a re-send is answered from the first run's record and deletes nothing
-- more (not an update another client made meanwhile).
-- KEYS[1] known HASH   KEYS[2] samples HASH
-- returns the number of keys deleted
local bad = check_types({KEYS[1], 'hash', 'counters known', KEYS[2], 'hash', 'counters samples'})
if bad then return bad end
return redis.call('DEL', KEYS[1], KEYS[2])
