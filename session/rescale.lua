-- rescale.lua: trim the view ranking to its most viewed items and halve
-- every count (the book's rescale_viewed) in one atomic step. A
-- once-script: a re-send is answered from the record of its first reply,
-- so a rescale halves once.
-- KEYS[1] views  ZSET item -> minus its view count
-- ARGV[1] how many of the most viewed items to keep
-- returns 1
local bad = check_types({KEYS[1], 'zset', 'session view ranking'})
if bad then return bad end
redis.call('ZREMRANGEBYRANK', KEYS[1], ARGV[1], -1)
redis.call('ZINTERSTORE', KEYS[1], 1, KEYS[1], 'WEIGHTS', 0.5)
return 1
