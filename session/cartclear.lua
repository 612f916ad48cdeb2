-- cartclear.lua: empty a session's cart (a checkout). Naturally
-- idempotent: a re-send finds the cart empty and leaves it so.
-- KEYS[1] cart  HASH of the session: item -> count
-- returns 1
-- The key is checked before the write.
local bad = check_types({KEYS[1], 'hash', 'session cart'})
if bad then return bad end
redis.call('DEL', KEYS[1])
return 1
