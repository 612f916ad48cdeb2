-- feed.lua: one batch of a fan-out on one server (syndicate_status): feed
-- status ARGV[1] to the timelines of the author's followers and lists whose
-- follower sequence number is in the range ARGV[6]..ARGV[7], read here, in
-- the same script as the feed. A target is fed if it is in the author's
-- followers (or listed) ZSET when the batch runs, so an unfollow (whose
-- first write removes the follower there) that ran before stops the feed,
-- and one that runs after removes the status with the rest. On a Cluster
-- the targets live on other nodes and deliver.lua runs instead, with the
-- targets named by the Go side and the follower's side checked.
-- The targets' keys are built here from the key prefix (a target's keys
-- cannot be declared before the range is read): on one server only.
-- A list target is fed only if the list's members still hold the author
-- (its entry in the author's listed ZSET can outlive a deleted list when
-- an AddToList raced the delete).
-- No tombstone can exist while the status HASH does (see deliver.lua), so
-- the status HASH is read once and tombstones are not. Each target's
-- timeline is read (ZCARD, which checks its type), and its user HASH when
-- inactive users are on, before any write; a target with a key of another
-- type is skipped, changing nothing of its own, and the others are fed.
-- Naturally idempotent: a re-send (or a re-run of the fan-out task) adds
-- the same member with the same score.
-- KEYS[1] status HASH   KEYS[2] author's followers ZSET (follower ID by
-- sequence number)   KEYS[3] author's listed ZSET ("<owner>/<list>" by the
-- same sequence)
-- ARGV[1] status ID   ARGV[2] score   ARGV[3] cap   ARGV[4] inactive-after
-- (ms, 0: off)   ARGV[5] key prefix: a user's key is <prefix>{<uid>}:<part>
-- ARGV[6] range min (ZRANGEBYSCORE syntax: '-inf', '(n')   ARGV[7] range max
-- returns the number of targets fed, or the first bad target's check error
local id, score, cap, idle, prefix = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local bad = check_types({KEYS[2], 'zset', 'social followers', KEYS[3], 'zset', 'social listed'})
if bad then return bad end
local targets = redis.call('ZRANGEBYSCORE', KEYS[2], ARGV[6], ARGV[7])
for _, l in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], ARGV[6], ARGV[7])) do
  targets[#targets + 1] = l
end
local pre = prefix .. '{'
local rpcall, find, sub = redis.pcall, string.find, string.sub
local author = string.match(id, '^(.*):')
local tls, users, lms, ok, card, first = {}, {}, {}, {}, {}, nil
for i = 1, #targets do
  local t = targets[i]
  local slash = find(t, '/', 1, true)
  local role
  if slash then
    local list = pre .. sub(t, 1, slash - 1) .. '}:list:' .. sub(t, slash + 1)
    tls[i], lms[i], role = list .. ':timeline', list .. ':members', 'social list timeline'
  else
    tls[i], role = pre .. t .. '}:home', 'social home timeline'
    if idle > 0 then users[i] = pre .. t .. '}:user' end
  end
  local c = rpcall('ZCARD', tls[i])
  local m = lms[i] and rpcall('ZSCORE', lms[i], author)
  if (type(c) == 'table' and c.err) or (type(m) == 'table' and m.err) then
    ok[i] = false
    first = first or check_types({tls[i], 'zset', role}) or (lms[i] and check_types({lms[i], 'zset', 'social list members'}))
      or redis.error_reply('social feed: unexpected error on ' .. tls[i])
  else
    local bad
    ok[i], card[i] = true, c
    if lms[i] and not m then ok[i] = false end -- a list that no longer holds the author (deleted)
    if users[i] then
      ok[i], bad = fanout_active(users[i], true)
    end
    first = first or bad
  end
end
local fed = fanout_write(#targets, tls, users, ok, card, idle, id, score, cap)
if first then return first end
return fed
