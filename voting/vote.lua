-- vote.lua: record user's up- or down-vote on an article (Redis in Action
-- 1.3.1, article_vote, with the chapter's down-vote exercise) in one atomic
-- step. A user holds at most one vote per article: a new vote moves the
-- score by one vote's weight, switching sides moves it by two, and voting
-- the same way again changes nothing. A once-script: a re-send of the same
-- call is answered from the record of its first reply (once.lua), so a
-- vote that counted says so even when its first reply was lost.
-- KEYS[1] time       ZSET article ID -> post time (server Unix s)
-- KEYS[2] score      ZSET article ID -> score
-- KEYS[3] article    HASH (fields votes, downvotes)
-- KEYS[4] voted      SET of up-voters
-- KEYS[5] downvoted  SET of down-voters
-- ARGV[1] article ID   ARGV[2] user   ARGV[3] 'up' or 'down'
-- ARGV[4] score of one vote (432)   ARGV[5] voting window (s)
-- returns 1 new vote, 2 switched sides, 0 already voted that way; the
-- error replies 'NOARTICLE' (no such article) and 'VOTINGCLOSED' refuse
-- the vote having written nothing, not even a record (a re-send is
-- refused alike).
-- Voting is open while the server's TIME is before the post time (the
-- score in KEYS[1]) plus the window. Every key, and the counters it
-- increments, is checked before the first write.
local timeKey, scoreKey, article, voted, downvoted = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id, user = ARGV[1], ARGV[2]
local weight = tonumber(ARGV[4])
local window = tonumber(ARGV[5])

local bad = vote_check(timeKey, scoreKey, article, voted, downvoted)
if bad then return bad end
local closed, posted = vote_closed(timeKey, id, window, article)
if closed then return closed end

local to, from, field, other, sign = voted, downvoted, 'votes', 'downvotes', 1
if ARGV[3] == 'down' then
  to, from, field, other, sign = downvoted, voted, 'downvotes', 'votes', -1
end

local result
if redis.call('SMOVE', from, to, user) == 1 then
  redis.call('HINCRBY', article, other, -1)
  redis.call('HINCRBY', article, field, 1)
  redis.call('ZINCRBY', scoreKey, sign * 2 * weight, id)
  result = 2
elseif redis.call('SADD', to, user) == 1 then
  redis.call('HINCRBY', article, field, 1)
  redis.call('ZINCRBY', scoreKey, sign * weight, id)
  result = 1
else
  return 0
end
-- The voters are needed only while voting is open (SMOVE or SADD may have
-- just created this set).
redis.call('PEXPIREAT', to, string.format('%d', math.ceil((posted + window) * 1000)))
return result
