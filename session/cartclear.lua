-- cartclear.lua: empty a session's cart (a checkout). Run as a
-- once-script: a re-send of the call is answered from the record of its
-- first reply instead of emptying the cart again, so it never deletes an
-- item that another client added after the clear. A refusal comes before
-- the write, so it leaves neither data nor a record.
-- KEYS[1] cart  HASH of the session: item -> count
-- returns 1
-- The key is checked before the write.
local bad = check_types({KEYS[1], 'hash', 'session cart'})
if bad then return bad end
redis.call('DEL', KEYS[1])
return 1
