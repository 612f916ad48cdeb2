-- listgone.lua: a later step of deleting a user list, in its owner's
-- slot, once the members' sides of a page no longer list it: remove those
-- members, and return the next page (list_purge, from listpurge.lua).
-- Naturally idempotent.
-- KEYS[1] the list's members ZSET   KEYS[2] the list's timeline ZSET
-- ARGV[1] page size   ARGV[2..] the members done
-- returns the next page of members (empty: the list is deleted)
local members, tl = KEYS[1], KEYS[2]
local bad = check_types({members, 'zset', 'social list members', tl, 'zset', 'social list timeline'})
if bad then return bad end
local done = {}
for i = 2, #ARGV do done[#done + 1] = ARGV[i] end
return list_purge(members, tl, done, tonumber(ARGV[1]))
