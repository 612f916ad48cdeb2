-- fetch.lua: a member's unseen messages of one chat, marked seen (Redis in
-- Action 6.5.3, fetch_pending_messages, for one chat; the client pipelines
-- one run per chat). Then trims what every member has seen. A run that
-- returned messages records its reply under KEYS[3] for the client's retry
-- window, and a re-send of the call answers from it: the messages a lost
-- reply carried come back, not nothing. (Not a script.NewOnce script: that
-- would write a record for every chat of every fetch, most of them empty.)
-- KEYS[1] members  KEYS[2] msgs (see create.lua)  KEYS[3] reply record
-- ARGV[1] user  ARGV[2] most messages  ARGV[3] record TTL in ms (0: none)
-- returns {1, more, id1, packed1, id2, packed2, ...}, {-1} no such chat,
-- {-2} not a member
local rec = redis.call('GET', KEYS[3])
if rec then
  -- 'n:' then per element '<len>:<bytes>'.
  local out, i = {}, 1
  while i <= #rec do
    local j = string.find(rec, ':', i, true)
    local n = tonumber(string.sub(rec, i, j - 1))
    out[#out + 1] = string.sub(rec, j + 1, j + n)
    i = j + n + 1
  end
  out[1], out[2] = tonumber(out[1]), tonumber(out[2])
  return out
end
local bad = check_types({KEYS[1], 'zset', 'chat members', KEYS[2], 'zset', 'chat messages'})
if bad then return bad end
local seen = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not seen then
  if redis.call('EXISTS', KEYS[1]) == 0 then return {-1} end
  return {-2}
end
local got = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. seen, '+inf', 'WITHSCORES', 'LIMIT', 0, ARGV[2])
if #got == 0 then return {1, 0} end
local last = got[#got]
redis.call('ZADD', KEYS[1], 'XX', last, ARGV[1])
local more = redis.call('ZCOUNT', KEYS[2], '(' .. last, '+inf')
local least = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', least[2])
local out = {1, more}
for i = 1, #got, 2 do
  out[#out + 1] = got[i + 1]
  out[#out + 1] = got[i]
end
local ttl = tonumber(ARGV[3])
if ttl > 0 then
  local enc = {}
  for i = 1, #out do
    local s = tostring(out[i])
    enc[i] = #s .. ':' .. s
  end
  redis.call('SET', KEYS[3], table.concat(enc), 'PX', ttl)
end
return out
