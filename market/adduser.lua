-- adduser.lua: create a user with a name and initial funds, and count the
-- funds into the market's money supply. Run as a once-script: a re-send of
-- the same call is answered from the record of its first run.
-- KEYS[1] user HASH (name, funds)   KEYS[2] money STRING (sum of deposits)
-- ARGV[1] name   ARGV[2] funds, an integer in [0, ARGV[3]]
-- ARGV[3] the most the money supply may reach (MaxFunds, 2^53)
-- returns 1 created, 0 the user exists already, -1 the funds would take
-- the money supply past ARGV[3] (nothing written unless 1)
local bad = check_types({KEYS[1], 'hash', 'market user'})
if bad then return bad end
-- The money supply, a sum of deposits, is never negative (a negative one
-- let deposits pass MaxFunds); one beyond MaxFunds is refused below as a
-- deposit past the bound.
bad = check_range(KEYS[2], 'market money', 0, 2^63, 'a non-negative integer')
if bad then return bad end
if redis.call('exists', KEYS[1]) == 1 then
  return 0
end
-- Exact in doubles: every value here is an integer of at most 2^53 (a
-- larger supply, written before the bound existed, rounds to >= 2^53 and
-- is refused). A user without funds adds nothing: never refused.
local funds = tonumber(ARGV[2])
local supply = tonumber(redis.call('get', KEYS[2]) or '0')
if funds > 0 and supply > tonumber(ARGV[3]) - funds then
  return -1
end
redis.call('incrby', KEYS[2], ARGV[2])
redis.call('hset', KEYS[1], 'name', ARGV[1], 'funds', ARGV[2])
return 1
