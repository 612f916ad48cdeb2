-- touch.lua: make contact the most recent of a user's recent contacts (Redis
-- in Action 6.1.1, add_update_contact): remove it wherever it is, push it
-- to the front, keep the newest ARGV[2]. A second run would move contact
-- back in front of another client's later add, or add it back after a
-- later remove, so this is a once-script (script.NewOnce): a re-send is
-- answered from the record of the first run and writes nothing.
-- Refusals (check_types) come before the first write: they are not recorded.
-- KEYS[1] recent  LIST of contacts, most recent first
-- ARGV[1] contact   ARGV[2] length kept
-- returns the list's length
local bad = check_types({KEYS[1], 'list', 'autocomplete recent contacts'})
if bad then return bad end
redis.call('LREM', KEYS[1], 0, ARGV[1])
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1)
return redis.call('LLEN', KEYS[1])
