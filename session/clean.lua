-- clean.lua: delete the oldest sessions beyond the limit, each with its
-- login entry, recent entry, viewed list and cart, in one atomic step.
-- The candidates were read just before (the oldest of recent, with their
-- scores); a candidate seen again since (its score changed) or already
-- deleted is skipped, and no more are deleted than bring the number of
-- sessions down to the limit.
-- KEYS[1] recent  ZSET token -> last seen
-- KEYS[2] login   HASH token -> user
-- KEYS[1+2i], KEYS[2+2i]  viewed ZSET and cart HASH of candidate i
-- ARGV[1] limit   ARGV[2i], ARGV[2i+1]  token and recent score of candidate i
-- returns the number of sessions deleted
local recent, login = KEYS[1], KEYS[2]
local excess = redis.call('ZCARD', recent) - tonumber(ARGV[1])
local deleted = 0
local n = (#ARGV - 1) / 2
for i = 1, n do
  if deleted >= excess then break end
  local token = ARGV[2 * i]
  local score = redis.call('ZSCORE', recent, token)
  if score and tonumber(score) == tonumber(ARGV[2 * i + 1]) then
    redis.call('DEL', KEYS[1 + 2 * i], KEYS[2 + 2 * i])
    redis.call('HDEL', login, token)
    redis.call('ZREM', recent, token)
    deleted = deleted + 1
  end
end
return deleted
