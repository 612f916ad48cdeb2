-- listremove.lua: the owner's side of removing a user from a list: remove
-- the member and drop every status of that user from the list's timeline.
-- A once-script: a re-send answers the same.
-- KEYS[1] the list's members ZSET   KEYS[2] the list's timeline ZSET
-- ARGV[1] member's user ID
-- returns 1 removed, 0 was not a member but its statuses were dropped;
-- the error reply NOTMEMBER (nothing written, no record) if it was not a
-- member and none of its statuses were there
local members, tl = KEYS[1], KEYS[2]
local bad = check_types({members, 'zset', 'social list members', tl, 'zset', 'social list timeline'})
if bad then return bad end
local pre = ARGV[1] .. ':'
local drop = {}
for _, id in ipairs(redis.call('ZRANGE', tl, 0, -1)) do
  if string.sub(id, 1, #pre) == pre then drop[#drop + 1] = id end
end
local removed = redis.call('ZREM', members, ARGV[1])
if removed == 0 and #drop == 0 then
  return redis.error_reply('NOTMEMBER social: not a member')
end
for i = 1, #drop, 1000 do
  redis.call('ZREM', tl, unpack(drop, i, math.min(i + 999, #drop)))
end
return removed
