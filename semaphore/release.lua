-- release.lua: give a permit back and hand it to the first live waiter:
-- add the waiter to holders with a fresh deadline, mint its seq and push
-- the seq to its grant list. Waiters whose place expired are skipped, and
-- woken (an empty value on their grant list) in case they are alive but
-- late: they try again. With ARGV[3] = '1' the caller is giving up a wait:
-- it also leaves the queue, releasing the permit in case a release had
-- handed it one. With ARGV[4] = '1' it deletes its own grant list (a plain
-- wait left the handed seq there). A release that succeeds records ARGV[5]
-- (the call's nonce) for ARGV[6] ms, so that a re-send of the same call
-- after a lost reply answers 1 again. The walk of the queue (queue_head,
-- drop_head) is place.lua's, which acquire shares, so that a newcomer waits
-- exactly for the waiters a release would hand a permit to. (check_*,
-- key_error come from internal/script's check.lua, mint() from its MintLua
-- and queue_head, drop_head from place.lua, prepended.)
-- KEYS[1] holders   KEYS[2] seq   KEYS[3] queue   KEYS[4] waiters
-- KEYS[5] grant list prefix: the grant list of waiter W is KEYS[5]..W. Such
--         keys cannot be listed in KEYS before W is read from the queue;
--         the shared hash tag keeps them in the slot of KEYS[1].
-- KEYS[6] the caller's own grant list
-- KEYS[7] the caller's release record (STRING)
-- ARGV[1] permit ID   ARGV[2] timeout ms   ARGV[3] '1' leaving a wait
-- ARGV[4] '1' clear own grant   ARGV[5] nonce ('': keep no record)
-- ARGV[6] record ms   ARGV[7] slack ms: how long a wake of a late waiter lives
-- returns 1 released (now or by an earlier run of this call), 0 not held
-- (expired or already released).
-- Every key a path relies on, the chosen waiter's grant list included, is
-- checked before its first write, by a read that fails on the wrong type
-- (ZSCORE, and queue_head's LINDEX and HGET), by TYPE, or by a first write
-- that fails changing nothing (mint's INCR); a failed check returns a key
-- error.
local holders, seq, queue, waiters, prefix, mine, record = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local id = ARGV[1]
local timeout = tonumber(ARGV[2])
local leaving, clear, nonce = ARGV[3] == '1', ARGV[4] == '1', ARGV[5]

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local score = redis.pcall('ZSCORE', holders, id)
if type(score) == 'table' then
  return check_type(holders, 'zset', 'semaphore holders') or score
end
local held = score and tonumber(score) > now
local bad

-- Read: the head entries to drop, the live waiter to hand over to, and the
-- late waiters to wake.
local drop, late = {}, {}
local target
if held then
  local err
  target, drop, err = queue_head(queue, waiters, now, id, function(w)
    local g = prefix .. w
    local gt = redis.call('TYPE', g).ok
    if gt == 'none' or gt == 'list' then late[#late + 1] = g end
  end)
  if err then return err end
  if target then
    bad = check_type(prefix .. target, 'list', 'semaphore grant')
    if bad then return bad end
  end
  if nonce ~= '' then
    bad = check_type(record, 'string', 'semaphore release record')
    if bad then return bad end
  end
end
if leaving then
  bad = check_types({queue, 'list', 'semaphore queue', waiters, 'hash', 'semaphore waiters'})
  if bad then return bad end
end
-- the own grant list is cleared only if it is a list: a key of another
-- type there is left alone (the caller's blocking read reported it)
local clearMine = (leaving or clear) and redis.call('TYPE', mine).ok == 'list'

-- Write.
local s
if target then
  local ok
  ok, s = pcall(mint, seq) -- the first write: its INCR fails, changing nothing, on a bad counter
  if not ok then
    return check_int(seq, 'semaphore seq') or key_error('CORRUPT', seq, 'semaphore seq', 'an integer at its maximum', 'an integer')
  end
end
if score then redis.call('ZREM', holders, id) end
if held then
  local n = #drop
  if target then n = n + 1 end
  drop_head(queue, waiters, n, drop)
  for _, g in ipairs(late) do
    redis.call('RPUSH', g, '')
    redis.call('PEXPIRE', g, ARGV[7])
  end
end
if leaving then
  if redis.call('HDEL', waiters, id) == 1 then
    redis.call('LREM', queue, 1, id)
  end
end
if held then
  if target then
    redis.call('HDEL', waiters, target)
    redis.call('ZADD', holders, string.format('%d', now + timeout), target)
    if redis.call('PTTL', holders) < timeout then
      redis.call('PEXPIRE', holders, string.format('%d', timeout))
    end
    local g = prefix .. target
    redis.call('RPUSH', g, string.format('%d', s))
    redis.call('PEXPIRE', g, string.format('%d', timeout))
  end
  if nonce ~= '' and tonumber(ARGV[6]) > 0 then
    redis.call('SET', record, nonce, 'PX', ARGV[6])
  end
end
if clearMine then redis.call('DEL', mine) end
if held then return 1 end
if nonce ~= '' then
  local r = redis.pcall('GET', record)
  if type(r) == 'table' then return check_type(record, 'string', 'semaphore release record') or r end
  if r == nonce then return 1 end
end
return 0
