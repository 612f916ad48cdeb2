-- clean.lua: remove one deleted status from the home timelines (or list
-- timelines) of a batch of targets (one step of clean_timelines), one call
-- per group of targets whose keys may share a script (as deliver.lua), the
-- calls pipelined, and leave a tombstone at each target so that a fan-out
-- of the status that comes later (deliver.lua) skips it. A tombstone is
-- kept for the tombstone TTL (WithTombstoneTTL), whatever the number of
-- tombstones: older ones are dropped here, and the whole ZSET expires a
-- TTL after its last tombstone. Never by count: a fan-out in flight must
-- find its tombstone however many deletes were cleaned meanwhile.
-- Naturally idempotent (a re-send writes the same tombstone, at a later
-- time at most).
-- First it checks the types of every key of every target; then it cleans
-- the targets whose keys are good. A target with a key of another type is
-- skipped, changing nothing of its own; the reply is then the check error
-- of the first bad target, else the number of timelines it was removed from.
-- Per target i, KEYS[2i-1] home ZSET   KEYS[2i] tombstones ZSET
-- (for a user list: the list's timeline, its owner's tombstones)
-- ARGV[1] status ID   ARGV[2] tombstone TTL (ms)
-- ARGV[2+i] 'list' for a user list, else ''
local id, ttl = ARGV[1], tonumber(ARGV[2])
local n = #KEYS / 2
local skip, first = {}, nil
for i = 1, n do
  local bad = check_types({KEYS[2 * i - 1], 'zset', ARGV[2 + i] == 'list' and 'social list timeline' or 'social home timeline',
    KEYS[2 * i], 'zset', 'social tombstones'})
  if bad then
    skip[i] = true
    first = first or bad
  end
end
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local removed = 0
for i = 1, n do
  if not skip[i] then
    local gone = KEYS[2 * i]
    redis.call('ZADD', gone, now, id)
    redis.call('ZREMRANGEBYSCORE', gone, '-inf', '(' .. string.format('%d', now - ttl))
    redis.call('PEXPIRE', gone, ttl)
    removed = removed + redis.call('ZREM', KEYS[2 * i - 1], id)
  end
end
if first then return first end
return removed
