-- addfunds.lua: deposit money on a user's account, counting it into the
-- market's money supply.
-- KEYS[1] user HASH (name, funds)   KEYS[2] money STRING (sum of deposits)
-- ARGV[1] amount, an integer > 0
-- returns the user's funds after the deposit (a string, exact), or nil for
-- an unknown user (nothing written)
if redis.call('exists', KEYS[1]) == 0 then
  return nil
end
-- The first write: if the supply would overflow, the error aborts the
-- script before anything is written. A balance never exceeds the supply,
-- so the HINCRBY below cannot overflow.
redis.call('incrby', KEYS[2], ARGV[1])
redis.call('hincrby', KEYS[1], 'funds', ARGV[1])
return redis.call('hget', KEYS[1], 'funds')
