-- remove.lua: drop contact from a user's recent contacts (Redis in Action
-- 6.1.1, remove_contact).
-- A once-script (script.NewOnce): a re-send is answered from the record of
-- the first run, so it never undoes what another client wrote in between.
-- Refusals (check_types) come before the first write: they are not recorded.
-- KEYS[1] recent  LIST of contacts, most recent first
-- ARGV[1] contact
-- returns how many entries it removed (0 or 1)
local bad = check_types({KEYS[1], 'list', 'autocomplete recent contacts'})
if bad then return bad end
return redis.call('LREM', KEYS[1], 0, ARGV[1])
