-- fanout.lua: what feed.lua and deliver.lua share, prepended to both.
-- A batch is fed in two passes: read every target (its timeline's size,
-- its user HASH when inactive users are on), which checks the types of
-- its keys, then write the targets whose reads passed.

-- fanout_active reads the user HASH of a target that is to be fed (ok
-- true) when inactive users are on: it returns false for a user marked
-- inactive, the time of its last read (or signup) for one not marked yet
-- (fanout_write compares it with the clock), else ok; and the check error
-- of a user HASH of another type or with a bad hint.
local function fanout_active(user, ok)
  local h = redis.pcall('HMGET', user, 'idle', 'seen', 'signup')
  if type(h) == 'table' and h.err then
    return false, check_types({user, 'hash', 'social user'}) or redis.error_reply('social feed: unexpected error on ' .. user)
  end
  -- is_count, not a looser pattern: digits past 2^53 ('-99999999999999999999')
  -- would read as a time that marks the user inactive.
  local bad = (h[2] and not is_count(h[2]) and check_hint(user, 'seen', 'social user'))
    or (h[3] and not is_count(h[3]) and check_hint(user, 'signup', 'social user'))
  if bad then return false, bad end
  if h[1] == '1' then return false end
  if ok and not h[1] then return tonumber(h[2] or h[3] or '0') end
  return ok
end

-- fanout_write feeds status id with score to the timelines tls[i] whose
-- ok[i] is set (a number: the last read of a user not active for idle ms
-- drops its timeline and marks users[i] instead), trimming each to cap
-- when its size card[i] before the feed was at cap. It returns the number
-- fed.
local function fanout_write(n, tls, users, ok, card, idle, id, score, cap)
  local now
  local fed = 0
  for i = 1, n do
    local feed = ok[i]
    if type(feed) == 'number' then
      if not now then
        local t = redis.call('TIME')
        now = t[1] * 1000 + math.floor(t[2] / 1000)
      end
      if now - feed > idle then -- inactive: drop the home, feed it no more
        redis.call('HSET', users[i], 'idle', 1)
        redis.call('DEL', tls[i])
        feed = false
      end
    end
    if feed then
      redis.call('ZADD', tls[i], score, id)
      if card[i] >= cap then redis.call('ZREMRANGEBYRANK', tls[i], 0, -cap - 1) end
      fed = fed + 1
    end
  end
  return fed
end
