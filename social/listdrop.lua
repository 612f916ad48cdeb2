-- listdrop.lua: the first step of deleting a user list, in its owner's
-- slot: the list leaves the owner's lists (from then on AddToList and
-- RemoveFromList answer that there is no such list, and CreateList of the
-- same name that it is taken until the delete is done), and the first page
-- of its members is returned for the members' sides. A list with no
-- members left is deleted here (its members and timeline keys). A list
-- whose name is no longer in the lists but whose keys remain is a delete
-- cut in half: this step goes on with it. A once-script: a re-send answers
-- the same.
-- KEYS[1] owner's lists ZSET   KEYS[2] the list's members ZSET
-- KEYS[3] the list's timeline ZSET
-- ARGV[1] list name   ARGV[2] page size
-- returns the first page of members (empty: the list is deleted); the
-- error reply NOLIST (nothing written, no record) if there is no such list
local lists, members, tl = KEYS[1], KEYS[2], KEYS[3]
local bad = check_types({lists, 'zset', 'social lists', members, 'zset', 'social list members',
  tl, 'zset', 'social list timeline'})
if bad then return bad end
if redis.call('ZREM', lists, ARGV[1]) == 0 and redis.call('EXISTS', members, tl) == 0 then
  return redis.error_reply('NOLIST social: no such list')
end
return list_purge(members, tl, {}, tonumber(ARGV[2]))
