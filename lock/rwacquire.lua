-- rwacquire.lua: take the read/write lock in mode ARGV[5] ('r' shared, 'w'
-- exclusive), or report it ours already (a re-run of this call after a
-- lost reply, or a hand-over by a release); otherwise, if the caller will
-- wait, keep its place in the FIFO queue. Before deciding, it settles the
-- lock (rwsettle.lua): expired readers are swept, and the waiters at the
-- head of the queue that the rule admits are granted, so that the holders'
-- expiry (a crash) does not stall the queue. A newcomer gets in only when
-- nobody waits (it cannot cut in). (check_*, key_error come from
-- internal/script's check.lua; rw_* from rwsettle.lua.)
-- KEYS[1] writer   STRING token of the writer, PX ttl
-- KEYS[2] readers  ZSET reader token -> deadline (server ms)
-- KEYS[3] fence    STRING counter, no TTL
-- KEYS[4] queue    LIST of waiting tokens, first come first served
-- KEYS[5] waiters  HASH token -> "<place expiry ms> <ttl ms> <r|w>"
-- KEYS[6] grant key prefix: the grant key of waiter W is KEYS[6]..W (the
--         hash tag keeps it in the slot of KEYS[1])
-- KEYS[7] the caller's grant key (LIST)
-- ARGV[1] token   ARGV[2] ttl ms   ARGV[3] wait ms left (0: do not queue)
-- ARGV[4] '1' wake: when the script takes the lock, or fails a check, it
--         pushes to the caller's grant key, so that the blocking pop sent
--         after it in the same pipeline returns at once
-- ARGV[5] mode 'r' or 'w'
-- ARGV[6] slack ms: how long a place outlives the wait it was kept for
-- returns {1, fence} acquired (or ours already), {0, retry ms} not: the
-- time until every holder's lease ends (-1: a writer without TTL).
-- Every key a path relies on is checked before its first write, by a read
-- that fails on the wrong type (GET, ZSCORE, ZCOUNT, LINDEX, HGET), by
-- TYPE, or by a first write that fails changing nothing (the fence's
-- INCRBY); a failed check returns a key error.
local writer, readers, fence, queue, waiters, prefix, grant =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local token, ttl, wait, wake, mode, slack =
  ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4] == '1', ARGV[5], tonumber(ARGV[6])

-- fail returns the key error b, waking a pipelined pop first (GrantLua)
local function fail(b) return grant_fail(grant, wake, 'lock rw grant', b) end
-- got returns the grant f, handing it to a pipelined pop (GrantLua)
local function got(f)
  grant_give(grant, wake, f, ttl)
  return {1, f}
end
local function fence_error()
  return check_int(fence, 'lock rw fence') or key_error('CORRUPT', fence, 'lock rw fence', 'an integer at its maximum', 'an integer')
end

local bad
local now = rw_now()
local w = redis.pcall('get', writer)
if type(w) == 'table' then return fail(check_type(writer, 'string', 'lock rw writer') or w) end
local ours
if mode == 'w' then
  ours = w == token
else
  local s = redis.pcall('zscore', readers, token)
  if type(s) == 'table' then return fail(check_type(readers, 'zset', 'lock rw readers') or s) end
  ours = s and tonumber(s) > now
end
if ours then
  -- a hand-over left the fence on the grant key; a re-run of a writer's
  -- call finds its fence on the counter (nobody minted since), a reader's
  -- gets a new one (others may have)
  bad = check_types({grant, 'list', 'lock rw grant', queue, 'list', 'lock rw queue', waiters, 'hash', 'lock rw waiters'})
    or check_int(fence, 'lock rw fence')
  if bad then return fail(bad) end
  -- a fence as a release pushes it; anything else ('' a wake, or a value
  -- Lua's tonumber reads loosely: 'inf', '0x10') is no fence
  local v, f = redis.call('lindex', grant, 0), nil
  if v and is_count(v) then f = tonumber(v) end
  if not f and mode == 'w' then f = tonumber(redis.call('get', fence) or '') end
  if not f then
    f = rw_mint(fence, 1)
    if not f then return fail(fence_error()) end
  end
  redis.call('del', grant)
  if redis.call('hdel', waiters, token) == 1 then redis.call('lrem', queue, 1, token) end
  -- The lease runs from now, as for a lock taken now: the caller dates its
  -- expiry from this call, and a hand-over may have started it well before
  -- (the caller paused, or between its rounds).
  if mode == 'w' then
    redis.call('pexpire', writer, ttl)
  else
    redis.call('zadd', readers, string.format('%d', now + ttl), token)
    if redis.call('pttl', readers) < tonumber(ttl) then redis.call('pexpire', readers, ttl) end
  end
  return got(f)
end

-- Read the state (each read fails on a key of the wrong type) and plan.
local live = redis.pcall('zcount', readers, '(' .. string.format('%d', now), '+inf')
if type(live) == 'table' then return fail(check_type(readers, 'zset', 'lock rw readers') or live) end
local p
p, bad = rw_plan(queue, waiters, prefix, now, w ~= false, live, nil, {token, ARGV[2], mode})
if not p then return fail(bad) end
local queued = false
for _, g in ipairs(p.grant) do
  if g[1] == token then queued = true end
end
local admit = false
if not queued and not p.stop then
  -- a newcomer behind nobody: it gets in if the lock admits it now
  local wnow = w ~= false
  local rnow = live
  for _, g in ipairs(p.grant) do
    if g[3] == 'w' then wnow = true else rnow = rnow + 1 end
  end
  if mode == 'w' then admit = not wnow and rnow == 0 else admit = not wnow end
end
-- the keys written below that no read has checked
if wake or queued then
  bad = check_type(grant, 'list', 'lock rw grant')
  if bad then return bad end
end
if not queued and not admit and wait > 0 then
  bad = check_type(waiters, 'hash', 'lock rw waiters')
  if bad then return fail(bad) end
end

-- Write.
local k = #p.grant
if admit then k = k + 1 end
local f
if k > 0 then
  f = rw_mint(fence, k) -- the first write: its INCRBY fails, changing nothing
  if not f then return fail(fence_error()) end
end
redis.call('zremrangebyscore', readers, '-inf', string.format('%d', now))
local mine = rw_apply(p, f, now, writer, readers, queue, waiters, prefix, slack, {token}, wake)
if mine then
  if wake then return {1, mine} end
  redis.call('del', grant)
  return {1, mine}
end
if admit then
  local fk = f + k - 1
  if mode == 'w' then
    redis.call('set', writer, token, 'PX', ttl)
  else
    redis.call('zadd', readers, string.format('%d', now + ttl), token)
    if redis.call('pttl', readers) < ttl then redis.call('pexpire', readers, ttl) end
  end
  return got(fk)
end

local retry = rw_retry(writer, readers, now)
if wait > 0 then
  -- Keep the place while the caller blocks: until the holders' leases end
  -- (it then tries again and renews the place) and within its wait, plus
  -- slack.
  local hold = wait
  if retry >= 0 and retry + 100 < hold then hold = retry + 100 end
  hold = hold + slack
  if redis.call('hset', waiters, token, string.format('%d %d %s', now + hold, ttl, mode)) == 1 then
    redis.call('rpush', queue, token)
  end
  if redis.call('pttl', waiters) < hold then
    redis.call('pexpire', queue, hold)
    redis.call('pexpire', waiters, hold)
  end
end
return {0, retry}
