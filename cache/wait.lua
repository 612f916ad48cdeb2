-- wait.lua: register the caller as a waiter of the lease whose marker it
-- read (so that whoever replaces the marker pushes to the lease's wake
-- list), unless the lease has ended meanwhile. Naturally idempotent.
-- KEYS[1] val   KEYS[2] the lease's wake list (<wake prefix> .. ARGV[1])
-- ARGV[1] the lease's token
-- returns {3, lease pttl}  registered: block on KEYS[2]
--         {0, payload}     the value is stored already
--         {4}              the lease ended without a value: look again
local cur, bad = read(KEYS[1], 'cache entry')
if bad then return bad end
bad = check_types({KEYS[2], 'list', 'cache wake list'})
if bad then return bad end
if not cur then return {4} end
local tok, waited = lease_of(cur)
if not tok then return {0, cur} end
if tok ~= ARGV[1] then return {4} end
if not waited then
  redis.call('set', KEYS[1], cur .. ':w', 'keepttl')
end
return {3, redis.call('pttl', KEYS[1])}
