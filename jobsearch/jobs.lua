-- jobs.lua: a page of a board's job IDs. Read-only.
-- KEYS[1] jobs ZSET job ID -> number of required skills
-- ARGV[1] first rank, ARGV[2] last rank (inclusive, both >= 0)
-- returns the IDs at those ranks: by number of required skills, then by
-- ID (byte order), as ZRANGE orders them.
local bad = check_types({KEYS[1], 'zset', 'jobsearch jobs'})
if bad then return bad end
return redis.call('ZRANGE', KEYS[1], ARGV[1], ARGV[2])
