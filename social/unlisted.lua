-- unlisted.lua: the member's side of removing a user from a list: drop
-- the list from the member's listed set. RemoveFromList runs it as a
-- once-script (record in the member's slot): a re-send answers the same
-- and changes nothing, even after an AddToList put the list back
-- meanwhile. It fails before its write (an error reply is not recorded)
-- on a bad key, and, for RemoveFromList (ARGV[2] '1'), when the list is
-- not there, so that removing a non-member writes nothing, not even a
-- record. DeleteList runs it plain, pipelined, once the list has left its
-- owner's lists (see DeleteList).
-- KEYS[1] member's listed ZSET
-- ARGV[1] "<owner>/<list>"   ARGV[2] '1' (RemoveFromList) or absent
-- returns 1 removed, 0 was not there (ARGV[2] absent); with ARGV[2] '1'
-- the error reply NOTMEMBER (nothing written, no record) if it was not
-- there: the caller goes on to the owner's side (listremove.lua), which
-- may still hold the member
local bad = check_types({KEYS[1], 'zset', 'social listed'})
if bad then return bad end
if ARGV[2] == '1' and not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return redis.error_reply('NOTMEMBER social: list not in the member\'s side')
end
return redis.call('ZREM', KEYS[1], ARGV[1])
