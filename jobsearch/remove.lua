-- remove.lua: remove jobs with their postings. Run as a once-script: a
-- re-send after a lost reply gets the first run's answer.
-- KEYS[1] jobs ZSET   KEYS[2] job prefix   KEYS[3] posting prefix
-- ARGV    the job IDs
-- returns the number of jobs removed (IDs not indexed are skipped)
-- Every key is checked before the first write.
local jobs, jpre, spre = KEYS[1], KEYS[2], KEYS[3]
local bad = check_types({jobs, 'zset', 'jobsearch jobs'})
if bad then return bad end

local plan = {}
for i = 1, #ARGV do
  local id = ARGV[i]
  local jk = jpre .. id
  bad = check_types({jk, 'hash', 'jobsearch job'})
  if bad then return bad end
  local old = redis.call('HKEYS', jk)
  for j = 1, #old do
    bad = check_types({spre .. old[j], 'zset', 'jobsearch skill'})
    if bad then return bad end
  end
  plan[#plan + 1] = {id = id, jk = jk, old = old}
end

local removed = 0
for _, p in ipairs(plan) do
  for j = 1, #p.old do redis.call('ZREM', spre .. p.old[j], p.id) end
  removed = removed + redis.call('DEL', p.jk)
  redis.call('ZREM', jobs, p.id)
end
return removed
