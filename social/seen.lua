-- seen.lua: home_seen and home_seen_write, shared by home.lua and
-- page.lua (prepended).

-- home_seen reads what recording a read of the home timeline of the user
-- whose HASH is user needs, when inactive users are not fed
-- (WithInactiveAfter), writing nothing: it returns the check error of a
-- key of another type (user, or home, the timeline); else regen, true
-- when the user was marked inactive (its timeline is being regenerated),
-- and due, the time to record as the read (nil when one less than every
-- ms old is recorded, or the user does not exist).
local function home_seen(user, home, every)
  local bad = check_types({user, 'hash', 'social user', home, 'zset', 'social home timeline'})
  if bad then return bad end
  if redis.call('EXISTS', user) == 0 then return false end
  bad = check_hint(user, 'seen', 'social user')
  if bad then return bad end
  local h = redis.call('HMGET', user, 'idle', 'seen')
  local t = redis.call('TIME')
  local now = t[1] * 1000 + math.floor(t[2] / 1000)
  local due
  if not h[2] or now - tonumber(h[2]) > every then due = now end
  return h[1] and true or false, due
end

-- home_seen_write records what home_seen read: the read's time due (if
-- any) and, when regen, that the timeline is being regenerated.
local function home_seen_write(user, regen, due)
  if due then redis.call('HSET', user, 'seen', due) end
  if regen then redis.call('HSET', user, 'idle', 2) end
end
