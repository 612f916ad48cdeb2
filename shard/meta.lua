-- meta.lua: keep a structure's parameters (shard size, expected total...),
-- written by the first New of the structure; later News read them.
-- KEYS[1] meta HASH    ARGV[1..] name, value pairs
-- returns the stored parameters (HGETALL): ARGV's when the hash was missing.
-- Idempotent: a re-send finds the hash and returns it.
local bad = check_types({KEYS[1], 'hash', 'shard meta'})
if bad then return bad end
if redis.call('exists', KEYS[1]) == 0 then
  redis.call('hset', KEYS[1], unpack(ARGV))
end
return redis.call('hgetall', KEYS[1])
