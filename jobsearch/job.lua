-- job.lua: the stored requirements of one job. Read-only.
-- KEYS[1] the job's HASH: skill -> requirement code
--         (code = required level*1e6 + required years*1e3 + the job's
--         number of required skills)
-- returns the HASH's fields and values as HGETALL does (empty: no such
-- job; Index never writes an empty HASH). The caller decodes the codes.
local bad = check_types({KEYS[1], 'hash', 'jobsearch job'})
if bad then return bad end
return redis.call('HGETALL', KEYS[1])
