-- rwrelease.lua: if the caller holds the read/write lock in mode ARGV[2],
-- give it up; a caller that may be in the queue (ARGV[3], a waiter giving
-- up) also leaves it. Then settle the lock (rwsettle.lua): sweep expired
-- readers and grant the waiters at the head of the queue that the rule
-- admits (the consecutive readers while no writer holds; the writer when
-- nobody holds), skipping (and waking) waiters whose place expired. Run
-- as a once-script
-- (script.NewOnce): a re-send of the same call is answered from the record
-- of its first reply. (check_*, key_error come from internal/script's
-- check.lua; rw_* from rwsettle.lua.)
-- KEYS[1] writer   KEYS[2] readers   KEYS[3] fence   KEYS[4] queue
-- KEYS[5] waiters  KEYS[6] grant key prefix   KEYS[7] the caller's grant key
-- ARGV[1] token   ARGV[2] mode 'r' or 'w'   ARGV[3] '1' may be queued
-- ARGV[4] '1' clear the caller's grant key (a plain wait left its grant
-- there, or a waiter gives up)   ARGV[5] slack ms: how long a wake of a
-- late waiter lives
-- returns 1 released, 0 not held (expired, or released already).
-- Every key a path relies on, each granted waiter's grant key included, is
-- checked before its first write, by a read that fails on the wrong type
-- (GET, ZSCORE, HEXISTS, ZCOUNT, LINDEX, HGET), by TYPE, or by a first
-- write that fails changing nothing (the fence's INCRBY); a failed check
-- returns a key error.
local writer, readers, fence, queue, waiters, prefix, mine =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local token, mode, queued, clear, slack = ARGV[1], ARGV[2], ARGV[3] == '1', ARGV[4] == '1', tonumber(ARGV[5])

local bad
local now = rw_now()
local w = redis.pcall('get', writer)
if type(w) == 'table' then return check_type(writer, 'string', 'lock rw writer') or w end
local held
if mode == 'w' then
  held = w == token
else
  local s = redis.pcall('zscore', readers, token)
  if type(s) == 'table' then return check_type(readers, 'zset', 'lock rw readers') or s end
  held = s and tonumber(s) > now
end
local inQueue = false
if queued then
  local e = redis.pcall('hexists', waiters, token)
  if type(e) == 'table' then return check_type(waiters, 'hash', 'lock rw waiters') or e end
  inQueue = e == 1
end

local p
if held or inQueue then
  local wnow = w ~= false and not (held and mode == 'w')
  local live = redis.pcall('zcount', readers, '(' .. string.format('%d', now), '+inf')
  if type(live) == 'table' then return check_type(readers, 'zset', 'lock rw readers') or live end
  if held and mode == 'r' then live = live - 1 end
  p, bad = rw_plan(queue, waiters, prefix, now, wnow, live, token, nil)
  if not p then return bad end
end
-- the own grant key is cleared only if it is a list: a key of another
-- type there is left alone (the caller's blocking read reported it)
if clear and redis.call('type', mine).ok ~= 'list' then clear = false end

-- Write.
local f
if p and #p.grant > 0 then
  f = rw_mint(fence, #p.grant) -- the first write: its INCRBY fails, changing nothing
  if not f then
    return check_int(fence, 'lock rw fence') or key_error('CORRUPT', fence, 'lock rw fence', 'an integer at its maximum', 'an integer')
  end
end
if held then
  if mode == 'w' then
    redis.call('del', writer)
  else
    redis.call('zrem', readers, token)
  end
end
if p then
  redis.call('zremrangebyscore', readers, '-inf', string.format('%d', now))
  rw_apply(p, f, now, writer, readers, queue, waiters, prefix, slack, nil, false)
  -- after the positional trim of rw_apply; a place it dropped is gone
  if inQueue and redis.call('hdel', waiters, token) == 1 then
    redis.call('lrem', queue, 1, token)
  end
end
if clear then redis.call('del', mine) end
if held then return 1 end
return 0
