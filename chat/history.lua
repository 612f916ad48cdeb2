-- history.lua: a page of a chat's messages, by id. Read-only.
-- KEYS[1] members  KEYS[2] msgs (see create.lua)
-- ARGV[1] after (exclusive)  ARGV[2] most messages
-- returns {1, packed...} or {-1} no such chat
local bad = check_types({KEYS[1], 'zset', 'chat members', KEYS[2], 'zset', 'chat messages'})
if bad then return bad end
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1} end
local out = {1}
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. ARGV[1], '+inf', 'LIMIT', 0, ARGV[2])) do
  out[#out + 1] = m
end
return out
