-- inspect_list.lua: one page of the tasks in one state, read-only.
-- (lib.lua is prepended.)
-- KEYS[1] tasks HASH (see lib.lua)
-- KEYS[2] the listed key: the ready LIST of one queue, or the delayed,
--         in-flight or dead ZSET of the group
-- ARGV[1] state: 'ready', 'delayed', 'running' or 'dead'
-- ARGV[2] offset   ARGV[3] limit (checked by the caller: their sum is small)
-- returns 5 fields per task: id, packed task, failed attempts, last error,
--   time (server Unix ms: due time, lease deadline, time of death; 0 for a
--   ready task). Ready tasks come in their list's order (the next one taken
--   first), delayed ones by due time, running ones by lease deadline, dead
--   ones most recent first. An entry whose task has no fields (a dangling
--   ID) is left out, so a page may hold fewer than limit tasks although more
--   follow it.
local state, first = ARGV[1], tonumber(ARGV[2])
local last = first + tonumber(ARGV[3]) - 1
local ids, ats = {}, {}
if state == 'ready' then
  for _, id in ipairs(rd('list', 'queue ready list', 'lrange', KEYS[2], first, last) or {}) do
    ids[#ids + 1], ats[#ats + 1] = id, 0
  end
else
  local role = ({delayed = 'queue delayed set', running = 'queue in-flight set', dead = 'queue dead set'})[state]
  local z = rd('zset', role, state == 'dead' and 'zrevrange' or 'zrange', KEYS[2], first, last, 'WITHSCORES') or {}
  for i = 1, #z, 2 do
    local id = z[i]
    if state == 'running' then id = string.match(id, '^(.*):[^:]*$') end -- '<id>:<lease token>'
    if id then ids[#ids + 1], ats[#ats + 1] = id, tonumber(z[i + 1]) end
  end
end
need(KEYS[1], 'hash', 'queue tasks')
if BAD then return BAD end
local out = {}
for i, id in ipairs(ids) do
  local f = redis.call('hmget', KEYS[1], id, id .. ':a', id .. ':e')
  if f[1] then
    out[#out + 1] = id
    out[#out + 1] = f[1]
    out[#out + 1] = f[2] or '0'
    out[#out + 1] = f[3] or ''
    out[#out + 1] = ats[i]
  end
end
return out
