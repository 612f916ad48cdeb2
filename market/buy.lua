-- buy.lua: the book's purchase_item in one atomic step: if the item is
-- listed at no more than the buyer's limit and the buyer can pay, move the
-- price from buyer to seller, the item to the buyer's inventory, and remove
-- the listing. Run as a once-script: a re-send of the same call is
-- answered from the record of its first run.
-- KEYS[1] listings ZSET   KEYS[2] buyer HASH   KEYS[3] seller HASH
-- KEYS[4] the buyer's inventory SET
-- ARGV[1] listings member "<item>.<seller>"   ARGV[2] item ID
-- ARGV[3] the most the buyer pays, an integer in [1, 2^53]
-- returns {code, price, funds}: code 0 bought, 1 not listed, 2 unknown
-- buyer, 3 price above ARGV[3], 4 insufficient funds, 5 malformed price
-- (a listing score that is not an integer in [1, 2^53], written by someone
-- else; funds is then the score); funds is the buyer's balance as stored
-- (codes 3 and 4), else ''. Nothing is written unless code is 0.
local bad = check_types({KEYS[1], 'zset', 'market listings', KEYS[2], 'hash', 'market user',
  KEYS[3], 'hash', 'market user', KEYS[4], 'set', 'market inventory'})
if bad then return bad end
bad = check_hint(KEYS[2], 'funds', 'market user') or check_hint(KEYS[3], 'funds', 'market user')
if bad then return bad end

local score = redis.call('zscore', KEYS[1], ARGV[1])
if not score then
  return {1, 0, ''}
end
local funds = redis.call('hget', KEYS[2], 'funds')
if not funds then
  return {2, 0, ''}
end
local price = to_number(score) -- miniredis replies 1e+8 for 100000000
if not price or price < 1 or price > 9007199254740992 or price % 1 ~= 0 then
  return {5, 0, score}
end
-- Comparisons in doubles are exact: the price and the limit are at most
-- 2^53, and so is every balance (the money supply is bounded by it).
if price > tonumber(ARGV[3]) then
  return {3, price, funds}
end
if tonumber(funds) < price then
  return {4, price, funds}
end
local p = string.format('%d', price)
-- Every key's type and every parsed value was checked above, and no
-- balance can overflow (the money supply bounds them): no write below can
-- fail.
redis.call('hincrby', KEYS[3], 'funds', p)
redis.call('hincrby', KEYS[2], 'funds', '-' .. p)
redis.call('sadd', KEYS[4], ARGV[2])
redis.call('zrem', KEYS[1], ARGV[1])
return {0, price, ''}
