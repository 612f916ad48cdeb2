-- acquire.lua: take the lock if it is free and mint its fencing token.
-- KEYS[1] owner key (STRING token, PX ttl)
-- KEYS[2] fence key (STRING counter, no TTL)
-- KEYS[3] waiting key (STRING mark, PX: someone is blocked waiting)
-- ARGV[1] token   ARGV[2] ttl ms   ARGV[3] wait ms left (0: not waiting)
-- returns {1, fence} acquired, {0, owner's pttl (-1: no TTL)} held by another.
-- The fence is max(previous + 1, server time in µs): strictly increasing per
-- lock, even after the counter is lost (a restart without persistence), as
-- long as the server's clock does not go back.
if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local t = redis.call('time')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local fence = tonumber(redis.call('get', KEYS[2]) or '0') + 1
  if fence < now then fence = now end
  redis.call('set', KEYS[2], string.format('%d', fence))
  return {1, fence}
end
local pttl = redis.call('pttl', KEYS[1])
-- Mark the lock as waited on for as long as this waiter may block: until
-- the owner's TTL ends (then it tries again and marks anew), within its wait.
local mark = tonumber(ARGV[3])
if mark > 0 then
  if pttl >= 0 and pttl + 1000 < mark then mark = pttl + 1000 end
  if redis.call('pttl', KEYS[3]) < mark then
    redis.call('set', KEYS[3], '1', 'PX', string.format('%d', mark))
  end
end
return {0, pttl}
