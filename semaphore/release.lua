-- release.lua: give a permit back and hand it to the first live waiter:
-- add the waiter to holders with a fresh deadline, mint its seq and push
-- the seq to its grant list. With ARGV[3] = '1' the caller is giving up a
-- wait: it first leaves the queue, then releases the permit in case a
-- release had handed it one. (mint() comes from internal/script's MintLua.)
-- KEYS[1] holders   KEYS[2] seq   KEYS[3] queue   KEYS[4] waiters
-- KEYS[5] grant list prefix: the grant list of waiter W is KEYS[5]..W. Such
--         keys cannot be listed in KEYS before W is popped; the shared hash
--         tag keeps them in the slot of KEYS[1].
-- KEYS[6] the caller's own grant list
-- ARGV[1] permit ID   ARGV[2] timeout ms   ARGV[3] '1' when leaving a wait
-- returns 1 released, 0 not held (expired or already released)
local holders, seq, queue, waiters = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id = ARGV[1]
local timeout = tonumber(ARGV[2])

if ARGV[3] == '1' then
  if redis.call('HDEL', waiters, id) == 1 then
    redis.call('LREM', queue, 1, id)
  end
  redis.call('DEL', KEYS[6])
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local score = redis.call('ZSCORE', holders, id)
redis.call('ZREM', holders, id)
if not score or tonumber(score) <= now then
  return 0
end

while true do
  local w = redis.call('LPOP', queue)
  if not w then break end
  local place = redis.call('HGET', waiters, w)
  if place then redis.call('HDEL', waiters, w) end
  if place and w ~= id and tonumber(place) > now then
    redis.call('ZADD', holders, string.format('%d', now + timeout), w)
    if redis.call('PTTL', holders) < timeout then
      redis.call('PEXPIRE', holders, string.format('%d', timeout))
    end
    local g = KEYS[5] .. w
    redis.call('RPUSH', g, string.format('%d', mint(seq)))
    redis.call('PEXPIRE', g, string.format('%d', timeout))
    return 1
  end
end
return 1
