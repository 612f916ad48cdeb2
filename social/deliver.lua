-- deliver.lua: feed one status to the home timelines (or list timelines) of
-- a batch of targets (one step of syndicate_status) where they live on
-- several servers (on one server feed.lua runs instead). The Go side sends
-- one call per group of targets whose keys may share a script (a Cluster:
-- targets of one hash slot; a Ring: of one shard), the calls pipelined
-- (script.Send). It feeds only a timeline whose
-- owner still follows the author (or whose list still holds it) and that
-- has no tombstone for the status (a clean of the status ran first there),
-- then trims it. The status HASH is in another slot: the tombstone is the
-- only guard against a delete that ran after the fan-out read the status,
-- and clean.lua keeps it for the tombstone TTL whatever the number of
-- later tombstones (see "Deletes and tombstones" in doc.go). Naturally
-- idempotent: a re-send (or a re-run of the
-- fan-out task) adds the same member with the same score.
-- First it reads (ZCARD, ZSCORE x2, HMGET when inactive users are on),
-- which checks the types (and hints) of every key of every target; only
-- then it writes, to the targets whose keys are all good. A target
-- with a key of another type is skipped, changing nothing of its own, and
-- the others are fed: the reply is then the check error of the first bad
-- target (a *ria.KeyError on the Go side), else the number fed.
-- Per target i, KEYS[4i-3] home ZSET   KEYS[4i-2] following ZSET
-- KEYS[4i-1] tombstones ZSET   KEYS[4i] user HASH
-- (for a user list: the list's timeline, its members, its owner's
-- tombstones, its owner's user HASH, unused)
-- ARGV[1] author's user ID   ARGV[2] status ID   ARGV[3] score   ARGV[4] cap
-- ARGV[5] inactive-after (ms, 0: off)   ARGV[5+i] 'list' for a user list, else ''
-- returns the number of targets fed, or the first bad target's check error
local author, id, score, cap, idle = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local n = #KEYS / 4
-- fails: the call on key failed (a key of another type): check_types names it.
local function fails(r) return type(r) == 'table' and r.err end
local tls, users, ok, card, first = {}, {}, {}, {}, nil
for i = 1, n do
  local home, following, gone, user = KEYS[4 * i - 3], KEYS[4 * i - 2], KEYS[4 * i - 1], KEYS[4 * i]
  tls[i], users[i] = home, user
  local tl, fl = 'social home timeline', 'social following'
  local list = ARGV[5 + i] == 'list'
  if list then tl, fl = 'social list timeline', 'social list members' end
  -- The reads the feed needs are the type checks: each fails on a key of
  -- another type (then check_types makes the error naming it), and only
  -- a target whose reads all passed is written.
  local c = redis.pcall('ZCARD', home)
  local f = redis.pcall('ZSCORE', following, author)
  local g = redis.pcall('ZSCORE', gone, id)
  local bad
  if fails(c) or fails(f) or fails(g) then
    bad = check_types({home, 'zset', tl, following, 'zset', fl, gone, 'zset', 'social tombstones'})
      or redis.error_reply('social deliver: unexpected error on ' .. home)
  else
    ok[i], card[i] = f and not g, c -- a target to feed, unless inactive
    if not list and idle > 0 then
      ok[i], bad = fanout_active(user, ok[i])
    end
  end
  if bad then
    ok[i] = false
    first = first or bad
  end
end
local fed = fanout_write(n, tls, users, ok, card, idle, id, score, cap)
if first then return first end
return fed
