-- state.lua: read what an operator may see of a lock, changing nothing:
-- whether it is held and for how long, the last fencing token minted, and
-- how many waiters are alive in its queue. Holders' tokens are never
-- returned (a token authorises release and extend). Serves the exclusive
-- lock and, with KEYS[5], the read/write lock. (check_* and key_error come
-- from internal/script's check.lua, live_place from place.lua.)
-- KEYS[1] owner (exclusive) or writer (read/write) STRING token, PX ttl
-- KEYS[2] fence   STRING counter
-- KEYS[3] queue   LIST of waiting tokens
-- KEYS[4] waiters HASH token -> "<place expiry ms> <ttl ms>[ <r|w>]"
-- KEYS[5] (read/write only) readers ZSET token -> deadline (server ms)
-- ARGV[1] the role prefix: 'lock' or 'lock rw'
-- returns {held (1: KEYS[1] holds a token), its PTTL (-1: no TTL, -2:
-- free), the fence ('' if none), live waiters, live readers, ms until the
-- last live reader's deadline (0: none)}.
-- A waiter is live while its place is one a release would hand the lock
-- to (live_place, the test the release scripts apply: not expired, not
-- malformed) and it does not hold the lock already.
local owner, fence, queue, waiters, readers = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local role = ARGV[1]

local bad = check_types({owner, 'string', role .. (readers and ' writer' or ' owner'),
  queue, 'list', role .. ' queue', waiters, 'hash', role .. ' waiters'})
  or check_int(fence, role .. ' fence')
  or (readers and check_type(readers, 'zset', role .. ' readers'))
if bad then return bad end

local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local cur = redis.call('get', owner)
local pttl = redis.call('pttl', owner)
local f = redis.call('get', fence) or ''

local nr, last = 0, 0
if readers then
  local lo = string.format('(%d', now)
  nr = redis.call('zcount', readers, lo, '+inf')
  local top = redis.call('zrange', readers, -1, -1, 'withscores')
  if top[2] and tonumber(top[2]) > now then last = tonumber(top[2]) - now end
end

local live = 0
local all = redis.call('hgetall', waiters)
for i = 1, #all, 2 do
  local w, place = all[i], all[i + 1]
  if live_place(place, now, readers ~= nil) and w ~= cur then
    local r = readers and redis.call('zscore', readers, w)
    if not r or tonumber(r) <= now then live = live + 1 end
  end
end

local held = 0
if cur then held = 1 end
return {held, pttl, f, live, nr, last}
