-- info.lua: one task's state, read-only. (lib.lua is prepended.)
-- KEYS[1] tasks HASH  KEYS[2] delayed ZSET  KEYS[3] inflight ZSET
-- KEYS[4] dead ZSET (see lib.lua)
-- ARGV[1] task ID   ARGV[2] the ID with SCAN pattern characters escaped
-- returns {} for no such task, else {state, packed task, failed attempts,
--   last error, time}: state 'dead' (time of death), 'delayed' (due
--   time, a retry's included), 'running' (lease deadline) or 'ready'
--   (time 0); times are server Unix ms
local id = ARGV[1]
local f = rd('hash', 'queue tasks', 'hmget', KEYS[1], id, id .. ':a', id .. ':e')
local dead = rd('zset', 'queue dead set', 'zscore', KEYS[4], id)
local due = rd('zset', 'queue delayed set', 'zscore', KEYS[2], id)
need(KEYS[3], 'zset', 'queue in-flight set')
if BAD then return BAD end
if not f[1] then return {} end
local state, at = 'ready', 0
if dead then
  state, at = 'dead', tonumber(dead)
elseif due then
  state, at = 'delayed', tonumber(due)
else
  -- In flight as "<ID>:<lease token>": bounded by the workers' concurrency.
  local cursor = '0'
  repeat
    local r = redis.call('zscan', KEYS[3], cursor, 'MATCH', ARGV[2] .. ':*', 'COUNT', 1000)
    cursor = r[1]
    for i = 1, #r[2], 2 do
      local m = r[2][i]
      if string.sub(m, 1, #id + 1) == id .. ':' and not string.find(m, ':', #id + 2, true) then
        state, at = 'running', tonumber(r[2][i + 1])
      end
    end
  until cursor == '0' or state == 'running'
end
return {state, f[1], f[2] or '0', f[3] or '', at}
