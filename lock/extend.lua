-- extend.lua: reset the lock's TTL if it still holds our token.
-- KEYS[1] owner key
-- ARGV[1] token   ARGV[2] ttl ms
-- returns 1 extended, 0 not held
if redis.call('get', KEYS[1]) ~= ARGV[1] then
  return 0
end
return redis.call('pexpire', KEYS[1], ARGV[2])
