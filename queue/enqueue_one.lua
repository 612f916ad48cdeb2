-- enqueue_one.lua: the common case of enqueue.lua in fewer words: one task
-- with a generated ID, ready at once. Its reads come first; on anything
-- unusual (a key of the wrong type, a server error) it has written nothing
-- and returns -1, and the caller runs enqueue.lua, which checks everything
-- and says what is wrong.
-- KEYS[1] tasks HASH   KEYS[2] ready LIST   KEYS[3] signal LIST of the queue
-- ARGV[1] id (a random UUID, new for every call)   ARGV[2] the packed task
-- returns 0 enqueued (or enqueued already by this call: a re-send finds
--         its ID), -1 see enqueue.lua
local n = redis.pcall('llen', KEYS[2])
if type(n) ~= 'number' then return -1 end
local s = 0
if n == 0 then
  s = redis.pcall('llen', KEYS[3])
  if type(s) ~= 'number' then return -1 end
end
local r = redis.pcall('hsetnx', KEYS[1], ARGV[1], ARGV[2])
if r == 0 then return 0 end
if r ~= 1 then return -1 end
redis.call('rpush', KEYS[2], ARGV[1])
if n == 0 and s == 0 then redis.call('rpush', KEYS[3], '1') end
return 0
