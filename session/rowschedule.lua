-- rowschedule.lua: start, change or stop the caching of a row (the book's
-- schedule_row_cache). A once-script: a re-send is answered from the
-- record of its first reply, so a row scheduled at once is not made due
-- again by the re-send after a RowCacher has cached it.
-- KEYS[1] schedule  ZSET row ID -> due (Unix ms; below 0: at once)
-- KEYS[2] delay     ZSET row ID -> re-caching period (ms)
-- KEYS[3] row       STRING the row's JSON
-- ARGV[1] row ID   ARGV[2] delay (ms); 0 stops caching the row
-- returns 1
-- A row scheduled is due at once with a score of its own: the server's
-- time in µs minus 2^52 (below 0 until 2112), so that a RowCacher whose
-- load began before it was (re)scheduled sees the change (rowstore.lua
-- compares scores; 0 for every schedule could not tell).
-- Every key it touches is checked before the first write.
local schedule, delay, row = KEYS[1], KEYS[2], KEYS[3]
local id, d = ARGV[1], tonumber(ARGV[2])
local spec = {schedule, 'zset', 'session row schedule', delay, 'zset', 'session row delays'}
if d <= 0 then
  spec[#spec + 1] = row; spec[#spec + 1] = 'string'; spec[#spec + 1] = 'session row'
end
local bad = check_types(spec)
if bad then return bad end
if d > 0 then
  local t = redis.call('TIME')
  local us = tonumber(t[1]) * 1000000 + tonumber(t[2])
  redis.call('ZADD', delay, ARGV[2], id)
  redis.call('ZADD', schedule, string.format('%d', us - 2^52), id) -- due at once
else
  redis.call('ZREM', delay, id)
  redis.call('ZREM', schedule, id)
  redis.call('DEL', row)
end
return 1
