-- refresh.lua: the background check of an entry a Get found due for
-- refresh (within the refresh window of its end, or stale): take the
-- refresh lease if nobody refreshes or loads it and it is still due; if it
-- expired meanwhile and nobody refreshes it, take its lease (a marker) and
-- load it. Never a waiter. Naturally idempotent (token and marker are the
-- caller's: a re-send finds its own lease, with a waiter's ':w' or not).
-- KEYS[1] val   KEYS[2] refresh lease
-- ARGV[1] token   ARGV[2] marker (MARK .. token)   ARGV[3] lease ms
-- ARGV[4] due window ms (refresh + grace)
-- returns 1 refresh (the caller holds the refresh lease), 2 load (it holds
--         the entry's lease), 0 nothing to do
local cur, bad = read(KEYS[1], 'cache entry')
if bad then return bad end
local held
held, bad = read(KEYS[2], 'cache refresh lease')
if bad then return bad end
if held == ARGV[1] then return 1 end
if lease_of(cur) == ARGV[1] then return 2 end -- our lease, ':w' or not
if held or lease_of(cur) then return 0 end
if not cur then
  redis.call('set', KEYS[1], ARGV[2], 'px', ARGV[3])
  return 2
end
local pttl = redis.call('pttl', KEYS[1])
if pttl < 0 or pttl > tonumber(ARGV[4]) then return 0 end
redis.call('set', KEYS[2], ARGV[1], 'px', ARGV[3])
return 1
