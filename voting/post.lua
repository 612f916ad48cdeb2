-- post.lua: post an article (Redis in Action 1.3.1, post_article) in one
-- atomic step: mint its ID, store its hash, index it by time and by score,
-- and record the poster's own up-vote. A once-script: a re-send of the same
-- call is answered from the record of its first reply (once.lua), so it
-- posts one article and answers its ID.
-- KEYS[1] seq        STRING the last article ID minted
-- KEYS[2] time       ZSET article ID -> post time (server Unix s)
-- KEYS[3] score      ZSET article ID -> score
-- KEYS[4] article key prefix: the article's HASH is KEYS[4]..ID
-- KEYS[5] voted key prefix: the article's up-voters SET is KEYS[5]..ID
--         The ID is minted here, so those two keys cannot be listed in KEYS;
--         they share the hash tag of KEYS[1], hence its Cluster slot.
-- ARGV[1] title   ARGV[2] link   ARGV[3] poster
-- ARGV[4] score of one vote (432)   ARGV[5] voting window (s)
-- returns the new article ID (a string: IDs may exceed a Lua number's
-- exact range)
-- Every key is checked, the new article's two included, before the first
-- write, so a failure writes nothing. The clock is the server's TIME,
-- shared by every client.
local seq, timeKey, scoreKey = KEYS[1], KEYS[2], KEYS[3]
local title, link, poster = ARGV[1], ARGV[2], ARGV[3]
local weight = tonumber(ARGV[4])
local window = tonumber(ARGV[5])
local seqRole = 'voting article ID counter'

local bad = check_types({seq, 'string', seqRole, timeKey, 'zset', 'voting time index',
  scoreKey, 'zset', 'voting score index'})
if bad then return bad end
local last = redis.call('GET', seq) or '0'
if last ~= '0' and not string.match(last, '^[1-9]%d*$') then
  return key_error('CORRUPT', seq, seqRole, string.format('%q', string.sub(last, 1, 40)), 'a non-negative integer')
end
if #last > 19 or (#last == 19 and last >= '9223372036854775807') then
  return key_error('CORRUPT', seq, seqRole, string.format('%q', last), 'an integer below 2^63-1')
end

-- The next ID, last + 1, in decimal digits (exact at any size).
local digits = {string.byte(last, 1, -1)}
local i = #digits
while i > 0 and digits[i] == 57 do -- '9'
  digits[i] = 48 -- '0'
  i = i - 1
end
local id
if i == 0 then
  id = '1' .. string.char(unpack(digits))
else
  digits[i] = digits[i] + 1
  id = string.char(unpack(digits))
end

local article, voted = KEYS[4] .. id, KEYS[5] .. id
bad = check_types({article, 'hash', 'voting article', voted, 'set', 'voting up-voters'})
if bad then return bad end
-- An article already under the next ID means the counter fell behind (it
-- was lost or set back): minting would merge two articles.
if redis.call('EXISTS', article) == 1 or redis.call('ZSCORE', timeKey, id) then
  return key_error('CORRUPT', seq, seqRole, string.format('%q', last), 'at least every article ID in use')
end

redis.call('SET', seq, id)
local t = redis.call('TIME')
local sec, usec = tonumber(t[1]), tonumber(t[2])
local now = string.format('%d.%06d', sec, usec)
redis.call('SADD', voted, poster)
-- The voters are needed only while voting is open.
redis.call('PEXPIREAT', voted,
  string.format('%d', (sec + window) * 1000 + math.ceil(usec / 1000)))
redis.call('HSET', article,
  'title', title, 'link', link, 'poster', poster, 'time', now,
  'votes', 1, 'downvotes', 0)
redis.call('ZADD', scoreKey, string.format('%d.%06d', sec + weight, usec), id)
redis.call('ZADD', timeKey, now, id)
return id
