-- take.lua: take an entry's lease in place of a value the caller could not
-- decode (another version of the program wrote it, or a person did),
-- unless the entry changed meanwhile. Naturally idempotent (the marker
-- carries the caller's token).
-- KEYS[1] val   ARGV[1] the undecodable payload   ARGV[2] the caller's marker
-- ARGV[3] lease ms
-- returns {2}        the caller holds the lease and loads
--         {0, cur}   the entry holds cur now (a value or another marker)
local cur, bad = read(KEYS[1], 'cache entry')
if bad then return bad end
if cur == ARGV[2] then return {2} end
if cur and cur ~= ARGV[1] then return {0, cur} end
redis.call('set', KEYS[1], ARGV[2], 'px', ARGV[3])
return {2}
