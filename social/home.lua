-- home.lua: the first read of a page of a home timeline when inactive
-- users are not fed (WithInactiveAfter): note that the user is active, and
-- read the page, or report that the timeline is being regenerated.
-- KEYS[1] user HASH   KEYS[2] home ZSET
-- ARGV[1] start   ARGV[2] stop   ARGV[3] how old (ms) a recorded read may
-- be before this one is recorded
-- returns {0, id...} a page, {1} the timeline is being regenerated (the
-- caller enqueues its regeneration)
local user, home = KEYS[1], KEYS[2]
local bad = check_types({user, 'hash', 'social user', home, 'zset', 'social home timeline'})
if bad then return bad end
if redis.call('EXISTS', user) == 1 then
  bad = check_hint(user, 'seen', 'social user')
  if bad then return bad end
  local h = redis.call('HMGET', user, 'idle', 'seen')
  local t = redis.call('TIME')
  local now = t[1] * 1000 + math.floor(t[2] / 1000)
  if not h[2] or now - tonumber(h[2]) > tonumber(ARGV[3]) then redis.call('HSET', user, 'seen', now) end
  if h[1] then
    redis.call('HSET', user, 'idle', 2)
    return {1}
  end
end
local out = {0}
for _, id in ipairs(redis.call('ZREVRANGE', home, ARGV[1], ARGV[2])) do out[#out + 1] = id end
return out
