-- listadd.lua: the owner's side of adding a user to a list
-- (follow_user_list): add the member, copy its recent statuses (read by
-- listed.lua) into the list's timeline, then trim it. A once-script: a
-- re-send answers the same.
-- KEYS[1] owner's lists ZSET   KEYS[2] the list's members ZSET
-- KEYS[3] the list's timeline ZSET   KEYS[4] owner's tombstones ZSET
-- ARGV[1] list name   ARGV[2] member's user ID   ARGV[3] timeline cap
-- ARGV[4..] status ID, score pairs
-- returns 1 added, 0 was a member; the error reply NOLIST (nothing
-- written, no record) if there is no such list
local lists, members, tl, gone = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local bad = check_types({lists, 'zset', 'social lists', members, 'zset', 'social list members',
  tl, 'zset', 'social list timeline', gone, 'zset', 'social tombstones'})
if bad then return bad end
if not redis.call('ZSCORE', lists, ARGV[1]) then return redis.error_reply('NOLIST social: no such list') end
local added = 0
if not redis.call('ZSCORE', members, ARGV[2]) then
  added = 1
  local t = redis.call('TIME')
  redis.call('ZADD', members, t[1] * 1000 + math.floor(t[2] / 1000), ARGV[2])
end
for i = 4, #ARGV, 2 do
  if not redis.call('ZSCORE', gone, ARGV[i]) then
    redis.call('ZADD', tl, ARGV[i + 1], ARGV[i])
  end
end
redis.call('ZREMRANGEBYRANK', tl, 0, -tonumber(ARGV[3]) - 1)
return added
