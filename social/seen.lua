-- seen.lua: home_seen, shared by home.lua and page.lua (prepended).

-- home_seen records a read of the home timeline of the user whose HASH is
-- user, when inactive users are not fed (WithInactiveAfter): the time of
-- the read, unless one recorded less than every ms ago. It returns true
-- when the timeline is being regenerated (the user was marked inactive;
-- it is marked as regenerating), false when it can be read, or the check
-- error of a key of another type (user, or home, the timeline).
local function home_seen(user, home, every)
  local bad = check_types({user, 'hash', 'social user', home, 'zset', 'social home timeline'})
  if bad then return bad end
  if redis.call('EXISTS', user) == 0 then return false end
  bad = check_hint(user, 'seen', 'social user')
  if bad then return bad end
  local h = redis.call('HMGET', user, 'idle', 'seen')
  local t = redis.call('TIME')
  local now = t[1] * 1000 + math.floor(t[2] / 1000)
  if not h[2] or now - tonumber(h[2]) > every then redis.call('HSET', user, 'seen', now) end
  if h[1] then
    redis.call('HSET', user, 'idle', 2)
    return true
  end
  return false
end
