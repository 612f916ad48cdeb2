-- release.lua: if the caller holds the lock, hand it to the first live
-- waiter in the queue (set it as owner with its own TTL, mint its fence and
-- push the fence to its grant key), or delete it when nobody waits.
-- With ARGV[2] = '1' the caller is giving up a wait: it first leaves the
-- queue, then releases the lock in case a release had handed it over.
-- (mint() comes from internal/script's MintLua, prepended.)
-- KEYS[1] owner   KEYS[2] fence   KEYS[3] queue   KEYS[4] waiters
-- KEYS[5] grant key prefix: the grant key of waiter W is KEYS[5]..W. Such
--         keys cannot be listed in KEYS before W is popped; the shared hash
--         tag keeps them in the slot of KEYS[1].
-- KEYS[6] the caller's own grant key
-- ARGV[1] token   ARGV[2] '1' when leaving a wait
-- returns 1 released, 0 not held
if ARGV[2] == '1' then
  if redis.call('hdel', KEYS[4], ARGV[1]) == 1 then
    redis.call('lrem', KEYS[3], 1, ARGV[1])
  end
  redis.call('del', KEYS[6])
end
if redis.call('get', KEYS[1]) ~= ARGV[1] then
  return 0
end
local now
while true do
  local w = redis.call('lpop', KEYS[3])
  if not w then break end
  local place = redis.call('hget', KEYS[4], w)
  if place then redis.call('hdel', KEYS[4], w) end
  if place and w ~= ARGV[1] then
    if not now then
      local t = redis.call('time')
      now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    end
    local expiry, ttl = string.match(place, '^(%d+) (%d+)$')
    if expiry and tonumber(expiry) > now then
      redis.call('set', KEYS[1], w, 'PX', ttl)
      local grant = KEYS[5] .. w
      redis.call('rpush', grant, string.format('%d', mint(KEYS[2])))
      redis.call('pexpire', grant, ttl)
      return 1
    end
  end
end
redis.call('del', KEYS[1])
return 1
