-- acquire.lua: take the lock if it is free, minting its fencing token;
-- otherwise, if the caller will wait, keep its place in the FIFO queue.
-- (mint() comes from internal/script's MintLua, prepended.)
-- KEYS[1] owner    STRING token, PX ttl
-- KEYS[2] fence    STRING counter, no TTL
-- KEYS[3] queue    LIST of waiting tokens, first come first served
-- KEYS[4] waiters  HASH token -> "<place expiry, server ms> <ttl ms>"
-- KEYS[5] the caller's grant key (LIST), where a release hands it the lock
-- ARGV[1] token   ARGV[2] ttl ms   ARGV[3] wait ms left (0: do not queue)
-- ARGV[4] '1' if an earlier attempt of this token may have queued it
-- returns {1, fence} acquired, {0, owner's pttl (-1: no TTL)} not acquired
if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if ARGV[4] == '1' and redis.call('hdel', KEYS[4], ARGV[1]) == 1 then
    redis.call('lrem', KEYS[3], 1, ARGV[1])
  end
  return {1, mint(KEYS[2])}
end
if ARGV[4] == '1' and redis.call('get', KEYS[1]) == ARGV[1] then
  -- a release handed us the lock while we were not blocked on the grant key
  redis.call('del', KEYS[5])
  return {1, tonumber(redis.call('get', KEYS[2]))}
end
local pttl = redis.call('pttl', KEYS[1])
local wait = tonumber(ARGV[3])
if wait > 0 then
  -- Keep the place while the caller blocks: until the owner's TTL ends (it
  -- then tries again and renews the place) and within its wait, plus slack.
  local hold = wait
  if pttl >= 0 and pttl + 100 < hold then hold = pttl + 100 end
  hold = hold + 2000
  local t = redis.call('time')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  if redis.call('hset', KEYS[4], ARGV[1], string.format('%d %s', now + hold, ARGV[2])) == 1 then
    redis.call('rpush', KEYS[3], ARGV[1])
  end
  if redis.call('pttl', KEYS[4]) < hold then
    redis.call('pexpire', KEYS[3], hold)
    redis.call('pexpire', KEYS[4], hold)
  end
end
return {0, pttl}
