-- listgone.lua: a later step of deleting a user list, in its owner's
-- slot, once the members' sides of a page no longer list it: remove those
-- members, and return the next page (list_purge, from listpurge.lua).
-- If the name is among the owner's lists again, the delete was done (a
-- re-send of its last step, or another DeleteList, after a CreateList of
-- the same name): nothing is written and the page is empty, so the new
-- list is left alone. Naturally idempotent.
-- KEYS[1] owner's lists ZSET   KEYS[2] the list's members ZSET
-- KEYS[3] the list's timeline ZSET
-- ARGV[1] list name   ARGV[2] page size   ARGV[3..] the members done
-- returns the next page of members (empty: the list is deleted)
local lists, members, tl = KEYS[1], KEYS[2], KEYS[3]
local bad = check_types({lists, 'zset', 'social lists', members, 'zset', 'social list members',
  tl, 'zset', 'social list timeline'})
if bad then return bad end
if redis.call('ZSCORE', lists, ARGV[1]) then return {} end
local done = {}
for i = 3, #ARGV do done[#done + 1] = ARGV[i] end
return list_purge(members, tl, done, tonumber(ARGV[2]))
