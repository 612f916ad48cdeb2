-- rwsettle.lua: the functions the read/write lock's acquire and release
-- scripts share (prepended to both, after internal/script's check.lua and
-- place.lua).
--
-- The fairness rule: waiters are served first come first served from the
-- queue; consecutive readers at its head are granted together while no
-- writer holds the lock; a writer at the head is granted when nobody holds
-- it; a waiting writer blocks every waiter behind it (readers included), so
-- a stream of readers cannot starve it.

-- rw_now returns the server time in ms.
local function rw_now()
  local t = redis.call('time')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- rw_mint returns the first of k (>= 1) new values of the counter key,
-- strictly increasing even if the counter is lost (as internal/script's
-- mint, for k at once), or nil when the counter cannot take them (it is
-- checked before: then it is at its maximum, 2^53 - 1 as Lua's numbers
-- hold it exactly); the INCRBY that fails, or is undone, changes nothing.
local function rw_mint(key, k)
  local n = redis.pcall('incrby', key, k)
  if type(n) == 'table' then return nil end
  if n >= 2^53 then
    -- beyond what Lua's numbers hold exactly (two mints could return the
    -- same fence): undo, changing nothing, as at the INCRBY's maximum
    redis.call('decrby', key, k)
    return nil
  end
  if n == k then
    local t = redis.call('time')
    local base = tonumber(t[1]) * 1000000 + tonumber(t[2])
    redis.call('set', key, string.format('%d', base + k - 1))
    return base
  end
  return n - k + 1
end

-- rw_plan reads the queue from its head and returns what settling it
-- means, or nil and an error reply (a key of the wrong type):
--   p.n      how many head entries to take off the queue
--   p.drop   tokens of those entries that are not granted (their place
--            expired or is malformed, or the token is skip)
--   p.late   grant keys of the dropped waiters to wake (alive but late)
--   p.grant  {token, ttl ms, 'r'|'w'} of the waiters to grant, in order
--   p.stop   true when a live waiter is left waiting at the head
-- writer: a writer holds the lock; readers: how many live readers hold it.
-- self, if not nil, is {token, ttl, mode} of the caller, whose place
-- counts as live whatever its expiry (it is here). Every grant key of a
-- waiter to grant is checked before any write.
local function rw_plan(queue, waiters, prefix, now, writer, readers, skip, self)
  local p = {n = 0, drop = {}, late = {}, grant = {}, stop = false}
  local i = 0
  while true do
    local w = redis.pcall('lindex', queue, i)
    if type(w) == 'table' then return nil, check_type(queue, 'list', 'lock rw queue') or w end
    if not w then break end
    local place = redis.pcall('hget', waiters, w)
    if type(place) == 'table' then return nil, check_type(waiters, 'hash', 'lock rw waiters') or place end
    local live, ttl, mode = false, nil, nil
    if self and w == self[1] then
      live, ttl, mode = true, self[2], self[3]
    elseif place and w ~= skip then
      -- a live place as rwacquire writes it (place.lua); any other is
      -- malformed
      local d, m = live_place(place, now, true)
      if d then
        live, ttl, mode = true, d, m
      else
        local g = prefix .. w
        local gt = redis.call('type', g).ok
        if gt == 'none' or gt == 'list' then p.late[#p.late + 1] = g end
      end
    end
    if live then
      if mode == 'w' then
        if writer or readers > 0 or #p.grant > 0 then
          p.stop = true
          break
        end
      elseif writer then
        p.stop = true
        break
      end
      if not (self and w == self[1]) then
        local bad = check_type(prefix .. w, 'list', 'lock rw grant')
        if bad then return nil, bad end
      end
      p.grant[#p.grant + 1] = {w, ttl, mode}
      if mode == 'w' then
        writer = true
      end
    else
      p.drop[#p.drop + 1] = w
    end
    i = i + 1
    if mode == 'w' and live then break end
  end
  p.n = i
  return p
end

-- rw_apply carries out plan p (after every check): takes its entries off
-- the queue, wakes the late waiters, and grants the lock to p.grant with
-- fences f, f+1...: a reader joins readers with its deadline, a writer
-- becomes the writer; each gets its fence on its grant key, except the
-- caller (self, not in wake mode), who gets it in the reply. It returns
-- the fence granted to self, if any.
local function rw_apply(p, f, now, writer, readers, queue, waiters, prefix, slack, self, wake)
  if p.n > 0 then redis.call('ltrim', queue, p.n, -1) end
  local gone = {}
  for _, w in ipairs(p.drop) do gone[#gone + 1] = w end
  for _, g in ipairs(p.grant) do gone[#gone + 1] = g[1] end
  for j = 1, #gone, 1000 do
    redis.call('hdel', waiters, unpack(gone, j, math.min(j + 999, #gone)))
  end
  for _, g in ipairs(p.late) do
    redis.call('rpush', g, '')
    redis.call('pexpire', g, slack)
  end
  local mine
  for k, g in ipairs(p.grant) do
    local fk = f + k - 1
    local token, ttl = g[1], tonumber(g[2])
    if g[3] == 'w' then
      redis.call('set', writer, token, 'PX', ttl)
    else
      redis.call('zadd', readers, string.format('%d', now + ttl), token)
      if redis.call('pttl', readers) < ttl then redis.call('pexpire', readers, ttl) end
    end
    if self and token == self[1] then
      mine = fk
    end
    if not (self and token == self[1]) or wake then
      local gk = prefix .. token
      redis.call('rpush', gk, string.format('%d', fk))
      redis.call('pexpire', gk, ttl)
    end
  end
  return mine
end

-- rw_retry returns the time in ms until every holder's lease ends (a
-- caller refused may get in then), -1 when a writer holds without a TTL
-- (set by hand: wait for a release), 0 when nobody holds.
local function rw_retry(writer, readers, now)
  local r = redis.call('pttl', writer)
  if r == -1 then return -1 end
  if r < 0 then r = 0 end
  local last = redis.call('zrange', readers, -1, -1, 'withscores')
  if last[2] and tonumber(last[2]) - now > r then r = tonumber(last[2]) - now end
  return r
end
