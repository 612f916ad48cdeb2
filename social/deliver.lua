-- deliver.lua: feed one status to the home timelines (or list timelines) of
-- a batch of targets (one step of syndicate_status). The Go side sends one
-- call per group of targets whose keys may share a script (one server: up
-- to feedCall targets; a Cluster: targets of one hash slot; a Ring: of one
-- shard), the calls pipelined (script.Send). It feeds only a timeline whose
-- owner still follows the author (or whose list still holds it) and that
-- has no tombstone for the status (a clean of the status ran first there),
-- then trims it. Naturally idempotent: a re-send (or a re-run of the
-- fan-out task) adds the same member with the same score.
-- First it reads (ZCARD, ZSCORE x2, HMGET when inactive users are on),
-- which checks the types (and hints) of every key of every target; only
-- then it writes, to the targets whose keys are all good. A target
-- with a key of another type is skipped, changing nothing of its own, and
-- the others are fed: the reply is then the check error of the first bad
-- target (a *ria.KeyError on the Go side), else the number fed.
-- Status mode: where the status HASH shares the targets' server (the Go
-- side knows: one server), it comes first in KEYS and one EXISTS replaces
-- the tombstone read of every target. Tombstones are written only by the
-- clean of a deleted status and status IDs are never reused, so while the
-- status HASH exists no target has its tombstone; once it is gone nobody
-- is fed (the clean removes the status anyway). The tombstones keys are
-- then not read, so not relied on, nor checked.
-- KEYS[1] status HASH, in status mode (then #KEYS is 4n+1)
-- Per target i (after it), home ZSET, following ZSET, tombstones ZSET,
-- user HASH (for a user list: the list's timeline, its members, its
-- owner's tombstones, its owner's user HASH, unused)
-- ARGV[1] author's user ID   ARGV[2] status ID   ARGV[3] score   ARGV[4] cap
-- ARGV[5] inactive-after (ms, 0: off)   ARGV[5+i] 'list' for a user list, else ''
-- returns the number of targets fed, or the first bad target's check error
local author, id, score, cap, idle = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local base = #KEYS % 4 -- 1 in status mode: KEYS[1] is the status HASH
local n = (#KEYS - base) / 4
if base == 1 and redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
-- fails: the call on key failed (a key of another type): check_types names it.
local function fails(r) return type(r) == 'table' and r.err end
local ok, card, first = {}, {}, nil
for i = 1, n do
  local k = base + 4 * i
  local home, following, gone, user = KEYS[k - 3], KEYS[k - 2], KEYS[k - 1], KEYS[k]
  local tl, fl = 'social home timeline', 'social following'
  local list = ARGV[5 + i] == 'list'
  if list then tl, fl = 'social list timeline', 'social list members' end
  -- The reads the feed needs are the type checks: each fails on a key of
  -- another type (then check_types makes the error naming it), and only
  -- a target whose reads all passed is written.
  local c = redis.pcall('ZCARD', home)
  local f = redis.pcall('ZSCORE', following, author)
  local g = false -- status mode: no tombstone while the status exists
  if base == 0 then g = redis.pcall('ZSCORE', gone, id) end
  local bad
  if fails(c) or fails(f) or fails(g) then
    bad = check_types({home, 'zset', tl, following, 'zset', fl})
      or (base == 0 and check_types({gone, 'zset', 'social tombstones'}))
      or redis.error_reply('social deliver: unexpected error on ' .. home)
  else
    ok[i], card[i] = f and not g, c -- a target to feed, unless inactive
    if not list and idle > 0 then
      local h = redis.pcall('HMGET', user, 'idle', 'seen', 'signup')
      if fails(h) then
        bad = check_types({user, 'hash', 'social user'}) or redis.error_reply('social deliver: unexpected error on ' .. user)
      else
        bad = (h[2] and not string.match(h[2], '^%-?%d+$') and check_hint(user, 'seen', 'social user'))
          or (h[3] and not string.match(h[3], '^%-?%d+$') and check_hint(user, 'signup', 'social user'))
        if h[1] == '1' then
          ok[i] = false
        elseif ok[i] and not h[1] then
          ok[i] = tonumber(h[2] or h[3] or '0') -- last read: checked against the clock below
        end
      end
    end
  end
  if bad then
    ok[i] = false
    first = first or bad
  end
end
local now
local fed = 0
for i = 1, n do
  if ok[i] then
    local k = base + 4 * i
    local home = KEYS[k - 3]
    if type(ok[i]) == 'number' then
      if not now then
        local t = redis.call('TIME')
        now = t[1] * 1000 + math.floor(t[2] / 1000)
      end
      if now - ok[i] > idle then -- inactive: drop the home, feed it no more
        redis.call('HSET', KEYS[k], 'idle', 1)
        redis.call('DEL', home)
        ok[i] = false
      end
    end
    if ok[i] then
      redis.call('ZADD', home, score, id)
      if card[i] >= cap then redis.call('ZREMRANGEBYRANK', home, 0, -cap - 1) end
      fed = fed + 1
    end
  end
end
if first then return first end
return fed
