-- inspect_delete.lua: delete a task that is ready, delayed (or waiting to
-- retry) or dead, with its fields, and release its unique lock if it still
-- holds it. A task in flight is left alone. Run once per call
-- (script.NewOnce): a re-send gets the first reply.
-- (lib.lua, common.lua and drop.lua are prepended.)
-- KEYS[1..7] the group's keys (common.lua)   KEYS[8] unique lock prefix
-- ARGV[1] id   ARGV[2] the ID with SCAN pattern characters escaped
-- returns 1 deleted, 0 no such task, 2 in flight (nothing changed)
local id = ARGV[1]
UNIQUE = KEYS[8]
local due = rd('zset', R_DELAYED, 'zscore', DELAYED, id)
local died = rd('zset', R_DEAD, 'zscore', DEAD, id)
local v = rd('hash', R_TASKS, 'hget', TASKS, id)
local q, u
if v then
  q = header(v)
  u = read_drop(v)
  if not due and not died then
    if q then
      llen(READY .. q, R_READY)
    else
      -- Its ready list cannot be named: refuse rather than leave its ID there.
      corrupt(TASKS, R_TASKS, id, v, 'a packed task')
    end
  end
end
need(INFLIGHT, 'zset', R_INFLIGHT)
need(TASKS, 'hash', R_TASKS)
if BAD then return BAD end
if due then
  redis.call('zrem', DELAYED, id)
elseif died then
  redis.call('zrem', DEAD, id)
elseif not v then
  return 0
elseif redis.call('lrem', READY .. q, 0, id) == 0 then
  -- In no list but inflight (as '<id>:<lease token>'), or in nothing at all.
  local cursor = '0'
  repeat
    local r = redis.call('zscan', INFLIGHT, cursor, 'MATCH', ARGV[2] .. ':*', 'COUNT', 1000)
    cursor = r[1]
    for i = 1, #r[2], 2 do
      local m = r[2][i]
      if string.sub(m, 1, #id + 1) == id .. ':' and not string.find(m, ':', #id + 2, true) then return 2 end
    end
  until cursor == '0'
end
if not v then return 0 end -- a dangling ID, now gone
drop(id, u)
return 1
