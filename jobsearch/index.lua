-- index.lua: index jobs, or re-index those already indexed, each with its
-- required skills. Run as a once-script: a re-send after a lost reply gets
-- the first run's answer.
-- KEYS[1] jobs           ZSET job ID -> number of required skills
-- KEYS[2] job prefix     <prefix><id> is the job's HASH skill -> code
-- KEYS[3] posting prefix <prefix><skill> is the skill's ZSET job ID -> code
-- ARGV[1] n jobs, then for each: ID, k skills, then k pairs skill, code
--         (code = level*1e6 + years*1e3 + k)
-- returns {added, replaced}
-- Every key (the jobs, each job's hash, the postings of its old and new
-- skills) is checked before the first write.
local jobs, jpre, spre = KEYS[1], KEYS[2], KEYS[3]
local bad = check_types({jobs, 'zset', 'jobsearch jobs'})
if bad then return bad end

local plan = {}
local a = 2
for i = 1, tonumber(ARGV[1]) do
  local id, k = ARGV[a], tonumber(ARGV[a + 1])
  a = a + 2
  local jk = jpre .. id
  bad = check_types({jk, 'hash', 'jobsearch job'})
  if bad then return bad end
  local new = {}
  for j = 1, k do
    new[#new + 1] = ARGV[a]
    new[#new + 1] = ARGV[a + 1]
    bad = check_types({spre .. ARGV[a], 'zset', 'jobsearch skill'})
    if bad then return bad end
    a = a + 2
  end
  local old = redis.call('HGETALL', jk)
  for j = 1, #old, 2 do
    if not string.match(old[j + 1], '^%d+$') then
      return key_error('CORRUPT', jk, 'jobsearch job field ' .. old[j], string.format('%q', string.sub(old[j + 1], 1, 40)), 'a requirement code')
    end
    bad = check_types({spre .. old[j], 'zset', 'jobsearch skill'})
    if bad then return bad end
  end
  plan[i] = {id = id, jk = jk, k = k, old = old, new = new}
end

local added, replaced = 0, 0
for _, p in ipairs(plan) do
  if #p.old > 0 then
    replaced = replaced + 1
    for j = 1, #p.old, 2 do redis.call('ZREM', spre .. p.old[j], p.id) end
    redis.call('DEL', p.jk)
  else
    added = added + 1
  end
  for j = 1, #p.new, 2 do redis.call('ZADD', spre .. p.new[j], p.new[j + 1], p.id) end
  redis.call('HSET', p.jk, unpack(p.new))
  redis.call('ZADD', jobs, p.k, p.id)
end
return {added, replaced}
