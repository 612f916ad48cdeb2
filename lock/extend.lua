-- extend.lua: reset the lock's TTL if it still holds our token. A re-run
-- after a lost reply extends again and answers the same. (check_type comes
-- from internal/script's check.lua.)
-- KEYS[1] owner key
-- ARGV[1] token   ARGV[2] ttl ms
-- returns 1 extended, 0 not held
local bad = check_type(KEYS[1], 'string', 'lock owner')
if bad then return bad end
if redis.call('get', KEYS[1]) ~= ARGV[1] then
  return 0
end
return redis.call('pexpire', KEYS[1], ARGV[2])
