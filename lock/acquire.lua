-- acquire.lua: take the lock if it is free, minting its fencing token, or
-- report it ours already (a re-run of this call after a lost reply, or a
-- lock a release handed to us); otherwise, if the caller will wait, keep
-- its place in the FIFO queue. (check_*, key_error come from
-- internal/script's check.lua and mint() from its MintLua, prepended.)
-- KEYS[1] owner    STRING token, PX ttl
-- KEYS[2] fence    STRING counter, no TTL
-- KEYS[3] queue    LIST of waiting tokens, first come first served
-- KEYS[4] waiters  HASH token -> "<place expiry, server ms> <ttl ms>"
-- KEYS[5] the caller's grant key (LIST), where a release hands it the lock
--         (a blocking read of it reports a wrong type itself)
-- ARGV[1] token   ARGV[2] ttl ms   ARGV[3] wait ms left (0: do not queue)
-- ARGV[4] '1' wake: when the script takes the lock, or fails a check, it
--         pushes to the caller's grant key, so that the blocking pop sent
--         after it in the same pipeline returns at once
-- ARGV[5] slack ms: how long a place outlives the wait it was kept for
-- returns {1, fence} acquired (or ours already), {0, owner's pttl (-1: no
-- TTL)} held by another.
-- Every key a path relies on is checked before its first write, by a read
-- that fails on the wrong type (GET), by TYPE, or by a first write that
-- fails changing nothing (mint's INCR, HSET); a failed check returns a
-- key error.
local owner, fence, queue, waiters, grant = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local token, ttl, wake = ARGV[1], ARGV[2], ARGV[4] == '1'

local bad
-- fail returns the key error b, waking a pipelined pop first (GrantLua)
local function fail(b) return grant_fail(grant, wake, 'lock grant', b) end
-- got returns the grant f, handing it to a pipelined pop (GrantLua)
local function got(f)
  grant_give(grant, wake, f, ttl)
  return {1, f}
end
local function fence_error()
  return check_int(fence, 'lock fence') or key_error('CORRUPT', fence, 'lock fence', 'an integer at its maximum', 'an integer')
end

-- A caller that takes the lock may keep a place in the queue from an
-- earlier attempt of its wait (its TTL ran out, or the holder's); left
-- there, it would let a release hand the lock back to it after its own
-- hold ended. placed() checks the keys its leaving writes and returns a key
-- error, or nil; leave() then takes the place out.
local queued = false
local function placed()
  if ARGV[3] == '0' then return nil end -- a TryAcquire never queues
  local n = redis.pcall('hexists', waiters, token)
  if type(n) == 'table' then return check_type(waiters, 'hash', 'lock waiters') or n end
  queued = n == 1
  if queued then return check_type(queue, 'list', 'lock queue') end
end
local function leave()
  if queued then
    redis.call('hdel', waiters, token)
    redis.call('lrem', queue, 1, token)
  end
end

local cur = redis.pcall('get', owner)
if type(cur) == 'table' then
  return fail(check_type(owner, 'string', 'lock owner') or cur)
end
if not cur then
  -- free: mint (its INCR fails, changing nothing, on a bad counter), take it
  if wake then
    bad = check_type(grant, 'list', 'lock grant')
    if bad then return bad end
  end
  bad = placed()
  if bad then return fail(bad) end
  local ok, f = pcall(mint, fence)
  if not ok then return fail(fence_error()) end
  redis.call('set', owner, token, 'PX', ttl)
  leave()
  return got(f)
end
if cur == token then
  -- ours already: a re-run after a lost reply, or handed over to us while
  -- we were not blocked on the grant key; nobody minted since
  bad = check_type(grant, 'list', 'lock grant') or check_int(fence, 'lock fence') or placed()
  if bad then return fail(bad) end
  redis.call('del', grant) -- a hand-over's fence
  local f = tonumber(redis.call('get', fence))
  if not f then f = mint(fence) end
  leave()
  -- The TTL runs from now, as for a lock taken now: the caller dates its
  -- expiry from this call, and a hand-over may have started the TTL well
  -- before it (the caller paused, or between its rounds).
  redis.call('pexpire', owner, ttl)
  return got(f)
end

local pttl = redis.call('pttl', owner)
local wait = tonumber(ARGV[3])
if wait > 0 then
  bad = check_type(queue, 'list', 'lock queue')
  if bad then return fail(bad) end
  -- Keep the place while the caller blocks: until the owner's TTL ends (it
  -- then tries again and renews the place) and within its wait, plus slack.
  local hold = wait
  if pttl >= 0 and pttl + 100 < hold then hold = pttl + 100 end
  hold = hold + tonumber(ARGV[5])
  local t = redis.call('time')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local n = redis.pcall('hset', waiters, token, string.format('%d %s', now + hold, ttl))
  if type(n) == 'table' then
    return fail(check_type(waiters, 'hash', 'lock waiters') or n)
  end
  if n == 1 then
    redis.call('rpush', queue, token)
  end
  if redis.call('pttl', waiters) < hold then
    redis.call('pexpire', queue, hold)
    redis.call('pexpire', waiters, hold)
  end
end
return {0, pttl}
