-- update.lua: record a request of a session (the book's update_token, in
-- one atomic step): map the token to its user, mark the session as seen
-- now, and when an item was viewed, add it to the session's last viewed
-- items (keeping the newest ARGV[4]) and count the view in the app's
-- ranking (ZINCRBY -1: rank 0 is the most viewed item).
-- Run as a once-script, with or without an item: a re-send of the call is
-- answered from the record of its first reply, so a view counts once and
-- a re-send never logs the token in again after a logout that ended the
-- session meanwhile. Refusals (key_error) come before the first write, so
-- they leave neither data nor a record.
-- KEYS[1] login   HASH token -> user
-- KEYS[2] recent  ZSET token -> last seen (server Unix µs)
-- KEYS[3] viewed  ZSET of the session: item -> view time (server Unix µs)
-- KEYS[4] views   ZSET item -> minus its view count
-- ARGV[1] token   ARGV[2] user   ARGV[3] item ('' for none)
-- ARGV[4] how many viewed items to keep
-- returns 1
-- Every key is checked before the first write. The clock is the server's
-- TIME, shared by every web server.
local bad = check_types({KEYS[1], 'hash', 'session logins', KEYS[2], 'zset', 'session recent',
  KEYS[3], 'zset', 'session viewed items', KEYS[4], 'zset', 'session view ranking'})
if bad then return bad end

local token, user, item = ARGV[1], ARGV[2], ARGV[3]
local keep = tonumber(ARGV[4])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

-- The newest view's time, which the new view must follow: a time in µs as
-- this script writes one, an integer in [0, 2^53) (a larger one, or inf,
-- read as a double, gave the new view INT64_MIN or a rounded time).
local last
if item ~= '' then
  last = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
  if last[2] and not (is_count(last[2]) and tonumber(last[2]) >= 0 and tonumber(last[2]) < 9007199254740991) then
    return key_error('CORRUPT', KEYS[3], 'session viewed items', string.format('%q', string.sub(last[2], 1, 40)),
      'view times in µs, integers in [0, 2^53)')
  end
end

redis.call('HSET', KEYS[1], token, user)
redis.call('ZADD', KEYS[2], string.format('%d', now), token)
if item ~= '' then
  -- Strictly after the newest view, so that the order of views survives
  -- two requests in one microsecond or a server clock that steps back.
  local at = now
  if last[2] and tonumber(last[2]) >= at then at = tonumber(last[2]) + 1 end
  redis.call('ZADD', KEYS[3], string.format('%d', at), item)
  redis.call('ZREMRANGEBYRANK', KEYS[3], 0, -(keep + 1))
  redis.call('ZINCRBY', KEYS[4], -1, item)
end
return 1
