-- list.lua: move an item from the seller's inventory to the market (the
-- book's list_item, atomic: no WATCH, no retry). Run as a once-script: a
-- re-send of the same call is answered from the record of its first run.
-- KEYS[1] the seller's inventory SET   KEYS[2] listings ZSET
-- ARGV[1] item ID   ARGV[2] listings member "<item>.<seller>"
-- ARGV[3] price, an integer in [1, 2^53]
-- returns 1 listed, 0 the seller does not hold the item (nothing written)
local bad = check_types({KEYS[1], 'set', 'market inventory', KEYS[2], 'zset', 'market listings'})
if bad then return bad end
if redis.call('srem', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('zadd', KEYS[2], ARGV[3], ARGV[2])
return 1
