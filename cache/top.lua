-- top.lua: add to a member's score in a ranking ('incr': ZINCRBY) or set it
-- ('add': ZADD), with a TTL if the rankings have one. Incr and Add run it
-- as a once-script: a re-send is answered from the first run's record
-- instead of running again (an Incr would count twice; an Add would undo
-- an Incr made between the two runs). The type is checked before the
-- first write, so a refusal writes nothing (and is not recorded).
-- KEYS[1] ranking   ARGV[1] 'incr' or 'add'   ARGV[2] by or score
-- ARGV[3] member   ARGV[4] ttl ms (0: none)
-- returns the member's score, as a string
local bad = check_types({KEYS[1], 'zset', 'cache top ranking'})
if bad then return bad end
local score = ARGV[2]
if ARGV[1] == 'incr' then
  score = redis.call('zincrby', KEYS[1], ARGV[2], ARGV[3])
else
  redis.call('zadd', KEYS[1], ARGV[2], ARGV[3])
end
if ARGV[4] ~= '0' then
  redis.call('pexpire', KEYS[1], ARGV[4])
end
return score
