-- additem.lua: put a new item in a user's inventory. Item IDs are unique
-- within a market, so that an item can never be in two places. Run as a
-- once-script: a re-send of the same call is answered from the record of
-- its first run.
-- KEYS[1] user HASH   KEYS[2] the user's inventory SET
-- KEYS[3] items SET, every item ID of the market
-- ARGV[1] item ID
-- returns 1 added, 0 unknown user, -1 the item ID exists in the market
-- (nothing written in either case)
local bad = check_types({KEYS[1], 'hash', 'market user', KEYS[2], 'set', 'market inventory',
  KEYS[3], 'set', 'market items'})
if bad then return bad end
if redis.call('exists', KEYS[1]) == 0 then
  return 0
end
if redis.call('sadd', KEYS[3], ARGV[1]) == 0 then
  return -1
end
redis.call('sadd', KEYS[2], ARGV[1])
return 1
