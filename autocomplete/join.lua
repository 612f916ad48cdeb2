-- join.lua: add names to a member set (Redis in Action 6.1.2, join_guild).
-- Each member is the name's folded form, a NUL byte and the name, with
-- score 0, so that the set sorts by folded form.
-- A once-script (script.NewOnce): a re-send is answered from the record of
-- the first run, so it never undoes what another client wrote in between.
-- Refusals (check_types) come before the first write: they are not recorded.
-- KEYS[1] members  ZSET
-- ARGV    the members to add
-- returns how many were new
local bad = check_types({KEYS[1], 'zset', 'autocomplete members'})
if bad then return bad end
local args = {}
for i = 1, #ARGV do
  args[2 * i - 1] = 0
  args[2 * i] = ARGV[i]
end
return redis.call('ZADD', KEYS[1], unpack(args))
