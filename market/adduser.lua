-- adduser.lua: create a user with a name and initial funds, and count the
-- funds into the market's money supply.
-- KEYS[1] user HASH (name, funds)   KEYS[2] money STRING (sum of deposits)
-- ARGV[1] name   ARGV[2] funds, an integer >= 0
-- returns 1 created, 0 the user exists already (nothing written)
if redis.call('exists', KEYS[1]) == 1 then
  return 0
end
-- The first write: if the supply would overflow, the error aborts the
-- script before anything is written.
redis.call('incrby', KEYS[2], ARGV[2])
redis.call('hset', KEYS[1], 'name', ARGV[1], 'funds', ARGV[2])
return 1
