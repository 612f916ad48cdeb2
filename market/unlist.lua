-- unlist.lua: take a listing back: remove the seller's listing of an item
-- from the market and put the item back in the seller's inventory, at
-- once. Run as a once-script: a re-send of the same call is answered from
-- the record of its first run (so a success never comes back as "not
-- listed").
-- KEYS[1] listings ZSET   KEYS[2] the seller's inventory SET
-- ARGV[1] listings member "<item>.<seller>"   ARGV[2] item ID
-- returns 1 taken back, 0 not listed by that seller (sold, taken back
-- already, never listed, or listed by someone else; nothing written)
local bad = check_types({KEYS[1], 'zset', 'market listings', KEYS[2], 'set', 'market inventory'})
if bad then return bad end
if redis.call('zrem', KEYS[1], ARGV[1]) == 0 then
  return 0
end
-- Both types were checked above: the SADD cannot fail.
redis.call('sadd', KEYS[2], ARGV[2])
return 1
