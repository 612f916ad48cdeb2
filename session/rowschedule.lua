-- rowschedule.lua: start, change or stop the caching of a row (the book's
-- schedule_row_cache). A once-script: a re-send is answered from the
-- record of its first reply, so a row scheduled at once is not made due
-- again by the re-send after a RowCacher has cached it.
-- KEYS[1] schedule  ZSET row ID -> due (Unix ms; below 0: at once)
-- KEYS[2] delay     ZSET row ID -> re-caching period (ms)
-- KEYS[3] row       STRING the row's JSON
-- KEYS[4] gen       HASH row ID -> generation
-- KEYS[5] counter   STRING the last generation minted
-- ARGV[1] row ID   ARGV[2] delay (ms); 0 stops caching the row
-- returns 1
-- A row scheduled gets a new generation (minted: never one given before),
-- so that a RowCacher whose load began before it was (re)scheduled writes
-- nothing (rowstore.lua and rowdrop.lua compare generations); a row
-- unscheduled loses its generation. It is due at once with a score of its
-- own, the server's time in µs minus 2^52 (below 0 until 2112): rows
-- scheduled at once are cached in the order they were scheduled.
-- Every key it touches is checked before the first write (mint's INCR when
-- scheduling: a counter at its maximum fails there, changing nothing; mint
-- comes from script.MintLua, check_types and check_int from check.lua).
local schedule, delay, row, gen, counter = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id, d = ARGV[1], tonumber(ARGV[2])
local spec = {schedule, 'zset', 'session row schedule', delay, 'zset', 'session row delays',
  gen, 'hash', 'session row generations'}
if d <= 0 then
  spec[#spec + 1] = row; spec[#spec + 1] = 'string'; spec[#spec + 1] = 'session row'
end
local bad = check_types(spec)
if bad then return bad end
if d > 0 then
  bad = check_int(counter, 'session row generation counter')
  if bad then return bad end
  local g = mint(counter) -- the first write
  local t = redis.call('TIME')
  local us = tonumber(t[1]) * 1000000 + tonumber(t[2])
  redis.call('ZADD', delay, ARGV[2], id)
  redis.call('ZADD', schedule, string.format('%d', us - 2^52), id) -- due at once
  redis.call('HSET', gen, id, string.format('%d', g))
else
  redis.call('ZREM', delay, id)
  redis.call('ZREM', schedule, id)
  redis.call('HDEL', gen, id)
  redis.call('DEL', row)
end
return 1
