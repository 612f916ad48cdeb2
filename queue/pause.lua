-- pause.lua: pause or resume a queue (lib.lua is prepended). A paused
-- queue keeps its tasks and takes new ones, but no take hands them out
-- (see take.lua). Resuming a queue that has ready tasks pushes a wake
-- token to its signal list, so that an idle worker takes at once.
-- A once-script (once.lua): a re-send is answered from the record of the
-- first run and writes nothing, so it cannot undo another client's Resume
-- (Pause) made meanwhile.
-- KEYS[1] paused SET   KEYS[2] ready LIST of the queue   KEYS[3] its signal LIST
-- ARGV[1] the queue's name   ARGV[2] '1' pause, '0' resume
-- returns 1 if the queue's state changed, 0 if it was so already
local bad = check_types({KEYS[1], 'set', 'queue paused set', KEYS[2], 'list', 'queue ready list',
  KEYS[3], 'list', 'queue signal list'})
if bad then return bad end
if ARGV[2] == '1' then return redis.call('sadd', KEYS[1], ARGV[1]) end
local n = redis.call('srem', KEYS[1], ARGV[1])
if redis.call('llen', KEYS[2]) > 0 and redis.call('llen', KEYS[3]) == 0 then redis.call('rpush', KEYS[3], '1') end
return n
