-- post.lua: post an article (Redis in Action 1.3.1, post_article) in one
-- atomic step: mint its ID, store its hash, index it by time and by score,
-- and record the poster's own up-vote.
-- KEYS[1] seq        STRING article ID counter (INCR)
-- KEYS[2] time       ZSET article ID -> post time (server Unix s)
-- KEYS[3] score      ZSET article ID -> score
-- KEYS[4] article key prefix: the article's HASH is KEYS[4]..ID
-- KEYS[5] voted key prefix: the article's up-voters SET is KEYS[5]..ID
--         The ID is minted here, so those two keys cannot be listed in KEYS;
--         they share the hash tag of KEYS[1], hence its Cluster slot.
-- ARGV[1] title   ARGV[2] link   ARGV[3] poster
-- ARGV[4] score of one vote (432)   ARGV[5] voting window (s)
-- returns the new article ID (integer)
-- The clock is the server's TIME, shared by every client.
local seq, timeKey, scoreKey = KEYS[1], KEYS[2], KEYS[3]
local title, link, poster = ARGV[1], ARGV[2], ARGV[3]
local weight = tonumber(ARGV[4])
local window = tonumber(ARGV[5])

local id = string.format('%d', redis.call('INCR', seq))
local t = redis.call('TIME')
local sec, usec = tonumber(t[1]), tonumber(t[2])
local now = string.format('%d.%06d', sec, usec)

local voted = KEYS[5] .. id
redis.call('SADD', voted, poster)
-- The voters are needed only while voting is open.
redis.call('PEXPIREAT', voted,
  string.format('%d', (sec + window) * 1000 + math.ceil(usec / 1000)))
redis.call('HSET', KEYS[4] .. id,
  'title', title, 'link', link, 'poster', poster, 'time', now,
  'votes', 1, 'downvotes', 0)
redis.call('ZADD', scoreKey, string.format('%d.%06d', sec + weight, usec), id)
redis.call('ZADD', timeKey, now, id)
return tonumber(id)
