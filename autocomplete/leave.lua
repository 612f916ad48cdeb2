-- leave.lua: remove names from a member set (Redis in Action 6.1.2,
-- leave_guild).
-- A once-script (script.NewOnce): a re-send is answered from the record of
-- the first run, so it never undoes what another client wrote in between.
-- Refusals (check_types) come before the first write: they are not recorded.
-- KEYS[1] members  ZSET
-- ARGV    the members to remove
-- returns how many were there
local bad = check_types({KEYS[1], 'zset', 'autocomplete members'})
if bad then return bad end
return redis.call('ZREM', KEYS[1], unpack(ARGV))
