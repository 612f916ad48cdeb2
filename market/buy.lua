-- buy.lua: the book's purchase_item in one atomic step: if the item is
-- listed at no more than the buyer's limit and the buyer can pay, move the
-- price from buyer to seller, the item to the buyer's inventory, and remove
-- the listing.
-- KEYS[1] listings ZSET   KEYS[2] buyer HASH   KEYS[3] seller HASH
-- KEYS[4] the buyer's inventory SET
-- ARGV[1] listings member "<item>.<seller>"   ARGV[2] item ID
-- ARGV[3] the most the buyer pays, an integer >= 1
-- returns {code, price, funds}: code 0 bought, 1 not listed, 2 unknown
-- buyer, 3 price above ARGV[3], 4 insufficient funds, 5 malformed price
-- (a listing score that is not an integer in [1, 2^53], written by someone
-- else); funds is the buyer's balance as stored (codes 3 and 4), else ''.
-- Nothing is written unless code is 0.

local score = redis.call('zscore', KEYS[1], ARGV[1])
if not score then
  return {1, 0, ''}
end
local funds = redis.call('hget', KEYS[2], 'funds')
if not funds then
  return {2, 0, ''}
end
local price = tonumber(score)
if not price or price < 1 or price > 9007199254740992 or price % 1 ~= 0 then
  return {5, 0, score}
end
-- Comparisons in doubles are exact here: price <= 2^53, and a larger
-- balance or limit rounds to a value >= 2^53.
if price > tonumber(ARGV[3]) then
  return {3, price, funds}
end
if tonumber(funds) < price then
  return {4, price, funds}
end
local p = string.format('%d', price)
-- The seller's HINCRBY is the only write that could fail (overflow, which
-- the money supply rules out); it comes first so a failure writes nothing.
redis.call('hincrby', KEYS[3], 'funds', p)
redis.call('hincrby', KEYS[2], 'funds', '-' .. p)
redis.call('sadd', KEYS[4], ARGV[2])
redis.call('zrem', KEYS[1], ARGV[1])
return {0, price, ''}
