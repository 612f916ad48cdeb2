-- acquire.lua: take a permit if fewer than limit live holders remain and no
-- live waiter is ahead; otherwise, if the caller will wait, keep its place
-- in the FIFO queue. (mint() comes from internal/script's MintLua.)
-- KEYS[1] holders  ZSET permit ID -> deadline (server Unix ms)
-- KEYS[2] seq      STRING counter (mint)
-- KEYS[3] queue    LIST of waiting permit IDs, first come first served
-- KEYS[4] waiters  HASH permit ID -> place expiry (server Unix ms)
-- KEYS[5] the caller's grant list, where a release hands it a permit
-- ARGV[1] permit ID   ARGV[2] limit   ARGV[3] timeout ms
-- ARGV[4] wait ms left (0: do not queue)
-- ARGV[5] '1' if an earlier attempt with this ID may have queued it (or
--         may have taken a permit whose reply was lost)
-- returns {1, seq} acquired, {0, retry ms} not acquired: retry is the time
-- until a permit may free itself (the earliest holder's deadline).
-- The clock is the server's TIME; no client clock is involved.
local holders, seq, queue, waiters, grant = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id = ARGV[1]
local limit = tonumber(ARGV[2])
local timeout = tonumber(ARGV[3])
local wait = tonumber(ARGV[4])
local queued = ARGV[5] == '1'

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', holders, '-inf', string.format('%d', now))

local function enter()
  redis.call('ZADD', holders, string.format('%d', now + timeout), id)
  if redis.call('PTTL', holders) < timeout then
    redis.call('PEXPIRE', holders, string.format('%d', timeout))
  end
end

if queued then
  if redis.call('ZSCORE', holders, id) then
    -- handed a permit while not blocked on the grant list, or a retry
    -- after a lost reply: keep the one permit, never take two
    local g = redis.call('LPOP', grant)
    if g then return {1, tonumber(g)} end
    enter()
    return {1, mint(seq)}
  end
  redis.call('DEL', grant) -- a hand-over that expired before we came back
end

local n = redis.call('ZCARD', holders)
if n < limit and (queued or redis.call('LLEN', queue) == 0) then
  if queued and redis.call('HDEL', waiters, id) == 1 then
    redis.call('LREM', queue, 1, id)
  end
  enter()
  return {1, mint(seq)}
end

local retry = 1 -- free permits wait for the queue to move; try again soon
if n >= limit then
  local first = redis.call('ZRANGE', holders, 0, 0, 'WITHSCORES')
  retry = tonumber(first[2]) - now
end
if wait > 0 then
  -- Keep the place while the caller blocks: until a permit may free itself
  -- (it then tries again and renews the place), within its wait, plus slack.
  local hold = wait
  if retry + 100 < hold then hold = retry + 100 end
  hold = hold + 2000
  if redis.call('HSET', waiters, id, string.format('%d', now + hold)) == 1 then
    redis.call('RPUSH', queue, id)
  end
  if redis.call('PTTL', waiters) < hold then
    redis.call('PEXPIRE', queue, string.format('%d', hold))
    redis.call('PEXPIRE', waiters, string.format('%d', hold))
  end
end
return {0, retry}
