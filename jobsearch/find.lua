-- find.lua: the jobs a candidate qualifies for. Read-only.
-- KEYS[i] the posting ZSET of the candidate's i-th skill: job ID -> code,
--         code = required level*1e6 + required years*1e3 + the job's
--         number of required skills
-- ARGV[2i-1] the candidate's level of skill i plus one, times 1e6 (the
--         exclusive score bound of the requirements of lower levels)
-- ARGV[2i] the candidate's years of skill i
-- returns the IDs of the jobs whose every required skill the candidate has
-- at the required level and years, in no order.
-- A job requiring k skills appears in k postings; it qualifies when k of
-- the candidate's postings hold it with a requirement the candidate meets
-- (each of its skills is counted once: a candidate's skills are distinct).
local spec = {}
for i = 1, #KEYS do
  spec[#spec + 1] = KEYS[i]; spec[#spec + 1] = 'zset'; spec[#spec + 1] = 'jobsearch skill'
end
local bad = check_types(spec)
if bad then return bad end

local count, out = {}, {}
local tonumber, floor = tonumber, math.floor
for i = 1, #KEYS do
  local years = tonumber(ARGV[2 * i])
  local r = redis.call('ZRANGEBYSCORE', KEYS[i], '-inf', '(' .. ARGV[2 * i - 1], 'WITHSCORES')
  for j = 1, #r, 2 do
    local code = tonumber(r[j + 1])
    if floor(code / 1000) % 1000 <= years then
      local need = code % 1000
      if need == 1 then
        out[#out + 1] = r[j]
      else
        local id = r[j]
        local c = (count[id] or 0) + 1
        count[id] = c
        if c == need then out[#out + 1] = id end
      end
    end
  end
end
return out
