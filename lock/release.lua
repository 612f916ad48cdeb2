-- release.lua: if the caller holds the lock, hand it to the first live
-- waiter in the queue (set it as owner with its own TTL, mint its fence and
-- push the fence to its grant key), or delete it when nobody waits. Waiters
-- whose place expired are skipped, and woken (an empty value on their
-- grant key) in case they are alive but late: they try again.
-- Whether or not it holds the lock, a caller that may be in the queue
-- leaves it (ARGV[2]), and a caller whose grant key may hold a value
-- deletes it (ARGV[3]); a waiter that gives up sets both.
-- A release that succeeds records ARGV[4] (the call's nonce) for ARGV[5]
-- ms, so that a re-send of the same call after a lost reply answers 1
-- again. (check_*, key_error come from internal/script's check.lua,
-- mint() from its MintLua, and live_place from place.lua.)
-- KEYS[1] owner   KEYS[2] fence   KEYS[3] queue   KEYS[4] waiters
-- KEYS[5] grant key prefix: the grant key of waiter W is KEYS[5]..W. Such
--         keys cannot be listed in KEYS before W is read from the queue;
--         the shared hash tag keeps them in the slot of KEYS[1].
-- KEYS[6] the caller's own grant key
-- KEYS[7] the caller's release record (STRING)
-- ARGV[1] token   ARGV[2] '1' may be queued   ARGV[3] '1' clear own grant
-- ARGV[4] nonce ('': keep no record)   ARGV[5] record ms
-- ARGV[6] slack ms: how long a wake of a late waiter lives
-- ARGV[7] '1' break (Locker.Break): release the lock whoever holds it, as
--         its holder's release would (ARGV[1..5] are then '', '0', '0',
--         '', 0, and KEYS[6], KEYS[7] unused): the holder's own place in
--         the queue, if any, is taken out (it never gets the lock back),
--         and its grant key is deleted, so that a hand-over it has not
--         read yet is not taken for a hold. Locker.Break runs this script
--         as a once-script (internal/script's NewOnce), whose record
--         answers a re-send.
-- returns 1 released (now or by an earlier run of this call), 0 not held.
-- Every key a path relies on, the chosen waiter's grant key included, is
-- checked before its first write, by a read that fails on the wrong type
-- (GET, LINDEX, HGET), by TYPE, or by a first write that fails changing
-- nothing (mint's INCR, HDEL); a failed check returns a key error.
local owner, fence, queue, waiters, prefix, mine, record = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local token, queued, clear, nonce = ARGV[1], ARGV[2] == '1', ARGV[3] == '1', ARGV[4]

local cur = redis.pcall('get', owner)
if type(cur) == 'table' then
  return check_type(owner, 'string', 'lock owner') or cur
end
if ARGV[7] == '1' and cur then
  -- break: act as the holder's release, whoever holds
  token, queued, clear, mine = cur, true, true, prefix .. cur
end
local held = cur == token
local bad

-- Read: the head entries to drop, the live waiter to hand over to, and the
-- late waiters to wake.
local drop, late = {}, {}
local target, ttl
if held then
  local now
  local i = 0
  while true do
    local w = redis.pcall('lindex', queue, i)
    if type(w) == 'table' then return check_type(queue, 'list', 'lock queue') or w end
    if not w then break end
    i = i + 1
    local place = redis.pcall('hget', waiters, w)
    if type(place) == 'table' then return check_type(waiters, 'hash', 'lock waiters') or place end
    if place and w ~= token then
      if not now then
        local t = redis.call('time')
        now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      end
      -- a live place as acquire writes it (place.lua); any other is
      -- malformed, skipped as expired
      local d = live_place(place, now, false)
      if d then
        target, ttl = w, d
        break
      end
      local g = prefix .. w
      local gt = redis.call('type', g).ok
      if gt == 'none' or gt == 'list' then late[#late + 1] = g end
    end
    drop[#drop + 1] = w
  end
  if target then
    bad = check_type(prefix .. target, 'list', 'lock grant')
    if bad then return bad end
  end
  if nonce ~= '' then
    bad = check_type(record, 'string', 'lock release record')
    if bad then return bad end
  end
elseif queued then
  bad = check_types({queue, 'list', 'lock queue', waiters, 'hash', 'lock waiters'})
  if bad then return bad end
end
-- the own grant key is cleared only if it is a list: a key of another type
-- there is left alone (the caller's blocking read reported it)
if clear and redis.call('type', mine).ok ~= 'list' then clear = false end

-- Write.
local f
if target then
  local ok
  ok, f = pcall(mint, fence) -- the first write: its INCR fails, changing nothing, on a bad counter
  if not ok then
    return check_int(fence, 'lock fence') or key_error('CORRUPT', fence, 'lock fence', 'an integer at its maximum', 'an integer')
  end
end
if held then
  local n = #drop
  if target then n = n + 1 end
  if n > 0 then redis.call('ltrim', queue, n, -1) end
  for j = 1, #drop, 1000 do
    redis.call('hdel', waiters, unpack(drop, j, math.min(j + 999, #drop)))
  end
  for _, g in ipairs(late) do
    redis.call('rpush', g, '')
    redis.call('pexpire', g, ARGV[6])
  end
end
if queued then
  -- the first write when the queue was empty: HDEL then fails changing
  -- nothing on a bad waiters key; else HGET checked it
  local n = redis.pcall('hdel', waiters, token)
  if type(n) == 'table' then return check_type(waiters, 'hash', 'lock waiters') or n end
  if n == 1 then
    redis.call('lrem', queue, 1, token) -- checked: by LINDEX when held, else by TYPE
  end
end
if held then
  if target then
    redis.call('hdel', waiters, target)
    redis.call('set', owner, target, 'PX', ttl)
    local g = prefix .. target
    redis.call('rpush', g, string.format('%d', f))
    redis.call('pexpire', g, ttl)
  else
    redis.call('del', owner)
  end
  if nonce ~= '' and tonumber(ARGV[5]) > 0 then
    redis.call('set', record, nonce, 'PX', ARGV[5])
  end
end
if clear then redis.call('del', mine) end
if held then return 1 end
if nonce ~= '' then
  local r = redis.pcall('get', record)
  if type(r) == 'table' then return check_type(record, 'string', 'lock release record') or r end
  if r == nonce then return 1 end
end
return 0
