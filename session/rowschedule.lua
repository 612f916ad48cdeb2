-- rowschedule.lua: start, change or stop the caching of a row (the book's
-- schedule_row_cache). A once-script: a re-send is answered from the
-- record of its first reply, so a row scheduled at once is not made due
-- again by the re-send after a RowCacher has cached it.
-- KEYS[1] schedule  ZSET row ID -> due (Unix ms; 0: at once)
-- KEYS[2] delay     ZSET row ID -> re-caching period (ms)
-- KEYS[3] row       STRING the row's JSON
-- ARGV[1] row ID   ARGV[2] delay (ms); 0 stops caching the row
-- returns 1
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
  redis.call('ZADD', delay, ARGV[2], id)
  redis.call('ZADD', schedule, 0, id) -- due at once
else
  redis.call('ZREM', delay, id)
  redis.call('ZREM', schedule, id)
  redis.call('DEL', row)
end
return 1
