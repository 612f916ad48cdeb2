-- acquire.lua: take a permit if fewer than limit live holders remain and no
-- live waiter is ahead, or report one ours already (a re-run of this call
-- after a lost reply, or a permit a release handed to us); otherwise, if
-- the caller will wait, keep its place in the FIFO queue. A waiter is live
-- as a release sees it: a newcomer walks the queue from its head past the
-- entries whose place expired (or is missing or malformed), drops them as
-- a release does (without waking them: a waiter late but alive finds its
-- place gone at its next attempt and queues again), and waits only for a
-- live waiter ahead. (check_*, key_error come from internal/script's
-- check.lua and mint() from its MintLua, grant_* from internal/wait's
-- GrantLua, queue_head and drop_head from place.lua, prepended.)
-- KEYS[1] holders  ZSET permit ID -> deadline (server Unix ms)
-- KEYS[2] seq      STRING counter (mint)
-- KEYS[3] queue    LIST of waiting permit IDs, first come first served
-- KEYS[4] waiters  HASH permit ID -> place expiry (server Unix ms)
-- KEYS[5] the caller's grant list, where a release hands it a permit (a
--         blocking read of it reports a wrong type itself)
-- ARGV[1] permit ID   ARGV[2] limit   ARGV[3] timeout ms
-- ARGV[4] wait ms left (0: do not queue)
-- ARGV[5] '1' if the caller may be in the queue (a waiting Acquire)
-- ARGV[6] '1' wake: when the script takes a permit, or fails a check, it
--         pushes to the grant list, so that the blocking pop sent after it
--         in the same pipeline returns at once
-- ARGV[7] slack ms: how long a place outlives the wait it was kept for
-- returns {1, seq} acquired (or ours already), {0, retry ms} not acquired:
-- retry is the time until a permit may free itself (the earliest holder's
-- deadline). The clock is the server's TIME; no client clock is involved.
-- Every key a path relies on is checked before its first write, by a read
-- that fails on the wrong type (ZSCORE, HEXISTS, and queue_head's LINDEX
-- and HGET), by TYPE, or by a first write that fails changing nothing
-- (mint's INCR, HSET); a failed check returns a key error.
local holders, seq, queue, waiters, grant = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id = ARGV[1]
local limit = tonumber(ARGV[2])
local timeout = tonumber(ARGV[3])
local wait = tonumber(ARGV[4])
local mayQueue = ARGV[5] == '1'
local wake = ARGV[6] == '1'

local bad
-- fail returns the key error b, waking a pipelined pop first (GrantLua)
local function fail(b) return grant_fail(grant, wake, 'semaphore grant', b) end
-- got returns the grant s, handing it to a pipelined pop (GrantLua)
local function got(s)
  grant_give(grant, wake, s, timeout)
  return {1, s}
end
local function seq_error()
  return check_int(seq, 'semaphore seq') or key_error('CORRUPT', seq, 'semaphore seq', 'an integer at its maximum', 'an integer')
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local score = redis.pcall('ZSCORE', holders, id)
if type(score) == 'table' then
  return fail(check_type(holders, 'zset', 'semaphore holders') or score)
end
if score and tonumber(score) > now then
  -- Handed a permit, or a re-run of this call after a lost reply: keep the
  -- one permit, never take two. A hand-over left its seq on the grant
  -- list; a re-run mints a new one (the first reply was lost).
  bad = check_types({grant, 'list', 'semaphore grant', queue, 'list', 'semaphore queue',
    waiters, 'hash', 'semaphore waiters'}) or check_int(seq, 'semaphore seq')
  if bad then return fail(bad) end
  -- a seq as a release pushes it; anything else ('' a wake, or a value
  -- Lua's tonumber reads loosely: 'inf', '0x10') is no seq
  local v, s = redis.call('LINDEX', grant, 0), nil
  if v and is_count(v) then s = tonumber(v) end
  if not s then
    local ok, m = pcall(mint, seq) -- the first write: fails changing nothing
    if not ok then return fail(seq_error()) end
    s = m
  end
  if redis.call('HDEL', waiters, id) == 1 then
    redis.call('LREM', queue, 1, id)
  end
  redis.call('DEL', grant)
  -- The permit's lease runs from now, as for one taken now: the caller
  -- dates its expiry from this call, and a hand-over may have started it
  -- well before (the caller paused, or between its rounds).
  redis.call('ZADD', holders, string.format('%d', now + timeout), id)
  if redis.call('PTTL', holders) < timeout then
    redis.call('PEXPIRE', holders, string.format('%d', timeout))
  end
  return got(s)
end

local live = redis.call('ZCOUNT', holders, '(' .. string.format('%d', now), '+inf')
local queueRead = false
local inQueue = false
-- queue entries ahead of the first live waiter, whose places expired: the
-- paths below drop them once their checks are done
local drop = {}
local allowed = live < limit
if allowed then
  if mayQueue then
    local e = redis.pcall('HEXISTS', waiters, id)
    if type(e) == 'table' then return fail(check_type(waiters, 'hash', 'semaphore waiters') or e) end
    inQueue = e == 1
  end
  if not inQueue then
    -- a newcomer waits only for a live waiter: a dead one's entry stays in
    -- the queue after its place expired, until a release or this drops it
    local ahead, err
    ahead, drop, err = queue_head(queue, waiters, now, nil)
    if err then return fail(err) end
    queueRead = true
    allowed = ahead == nil
  end
end
if allowed then
  if inQueue then
    bad = check_type(queue, 'list', 'semaphore queue')
    if bad then return fail(bad) end
  end
  if wake then
    bad = check_type(grant, 'list', 'semaphore grant')
    if bad then return bad end
  end
  local ok, s = pcall(mint, seq) -- the first write: its INCR fails, changing nothing, on a bad counter
  if not ok then return fail(seq_error()) end
  drop_head(queue, waiters, #drop, drop)
  if inQueue then
    -- leave the queue: a release must not hand a permit to a holder
    redis.call('HDEL', waiters, id)
    redis.call('LREM', queue, 1, id)
  end
  redis.call('ZREMRANGEBYSCORE', holders, '-inf', string.format('%d', now))
  redis.call('ZADD', holders, string.format('%d', now + timeout), id)
  if redis.call('PTTL', holders) < timeout then
    redis.call('PEXPIRE', holders, string.format('%d', timeout))
  end
  return got(s)
end

local retry = 1 -- free permits wait for the queue to move; try again soon
if live >= limit then
  local first = redis.call('ZRANGEBYSCORE', holders, '(' .. string.format('%d', now), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  retry = tonumber(first[2]) - now
end
if wait > 0 then
  if not queueRead then
    bad = check_type(queue, 'list', 'semaphore queue')
    if bad then return fail(bad) end
  end
  -- Keep the place while the caller blocks: until a permit may free itself
  -- (it then tries again and renews the place), within its wait, plus slack.
  local hold = wait
  if retry + 100 < hold then hold = retry + 100 end
  hold = hold + tonumber(ARGV[7])
  -- A caller that queues drops the dead entries ahead of the live waiter
  -- its walk found (the walk checked both keys; a refused TryAcquire
  -- writes nothing). Before its own place: its own stale entry may be
  -- among them.
  drop_head(queue, waiters, #drop, drop)
  local n = redis.pcall('HSET', waiters, id, string.format('%d', now + hold)) -- the first write if nothing was dropped
  if type(n) == 'table' then return fail(check_type(waiters, 'hash', 'semaphore waiters') or n) end
  if n == 1 then
    redis.call('RPUSH', queue, id)
  end
  if redis.call('PTTL', waiters) < hold then
    redis.call('PEXPIRE', queue, string.format('%d', hold))
    redis.call('PEXPIRE', waiters, string.format('%d', hold))
  end
end
return {0, retry}
