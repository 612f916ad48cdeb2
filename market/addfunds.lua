-- addfunds.lua: deposit money on a user's account, counting it into the
-- market's money supply. Run as a once-script: a re-send of the same call
-- is answered from the record of its first run.
-- KEYS[1] user HASH (name, funds)   KEYS[2] money STRING (sum of deposits)
-- ARGV[1] amount, an integer in [1, ARGV[2]]
-- ARGV[2] the most the money supply may reach (MaxFunds, 2^53)
-- returns {1, funds after the deposit}, {0, 0} unknown user, or
-- {-1, money supply} the deposit would take the supply past ARGV[2]
-- (nothing written unless the code is 1)
local bad = check_types({KEYS[1], 'hash', 'market user'})
if bad then return bad end
-- The money supply, a sum of deposits, is never negative (a negative one
-- let deposits pass MaxFunds); one beyond MaxFunds is refused below as a
-- deposit past the bound.
bad = check_range(KEYS[2], 'market money', 0, 2^63, 'a non-negative integer') or check_hint(KEYS[1], 'funds', 'market user')
if bad then return bad end
if redis.call('exists', KEYS[1]) == 0 then
  return {0, 0}
end
local supply = tonumber(redis.call('get', KEYS[2]) or '0')
if supply > tonumber(ARGV[2]) - tonumber(ARGV[1]) then
  return {-1, supply}
end
-- A balance never exceeds the supply, which stays within 2^53: neither
-- increment can overflow.
redis.call('incrby', KEYS[2], ARGV[1])
return {1, redis.call('hincrby', KEYS[1], 'funds', ARGV[1])}
