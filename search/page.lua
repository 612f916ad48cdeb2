-- page.lua: read a page of a cached search result of one shard and set its
-- TTL again (book 7.1.2: a search id kept 30 s for later pages).
-- KEYS[1] <sid>:l ids LIST   KEYS[2] <sid>:k sort keys LIST   KEYS[3] <sid>:n total STRING
-- ARGV[1] TTL ms   ARGV[2] offset   ARGV[3] count (0: only refresh)
-- returns {-1} when the result has expired, else {total, {id, key, ...}}
local bad = check_types({KEYS[1], 'list', 'search cached result', KEYS[2], 'list', 'search cached result',
  KEYS[3], 'string', 'search cached result'})
if bad then return bad end
local total = redis.call('GET', KEYS[3])
if not total then return {-1} end
if not string.match(total, '^%d+$') then
  return key_error('CORRUPT', KEYS[3], 'search cached result', string.format('%q', string.sub(total, 1, 40)), 'a count')
end
local ttl, offset, count = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('PEXPIRE', KEYS[3], ttl)
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
local out = {}
if count > 0 then
  local ids = redis.call('LRANGE', KEYS[1], offset, offset + count - 1)
  local ks = redis.call('LRANGE', KEYS[2], offset, offset + count - 1)
  for i = 1, #ids do out[#out + 1] = ids[i]; out[#out + 1] = ks[i] end
end
return {tonumber(total), out}
