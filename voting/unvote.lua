-- unvote.lua: withdraw user's up- or down-vote on an article in one atomic
-- step, undoing exactly what vote.lua did: the user leaves the voters' set,
-- the article's votes (or downvotes) drop by 1 and its score moves back by
-- one vote's weight. A once-script: a re-send of the same call is answered
-- from the record of its first reply (once.lua), so a vote withdrawn says
-- so even when its first reply was lost.
-- KEYS[1] time       ZSET article ID -> post time (server Unix s)
-- KEYS[2] score      ZSET article ID -> score
-- KEYS[3] article    HASH (fields votes, downvotes)
-- KEYS[4] voted      SET of up-voters
-- KEYS[5] downvoted  SET of down-voters
-- ARGV[1] article ID   ARGV[2] user
-- ARGV[3] score of one vote (432)   ARGV[4] voting window (s)
-- returns 1 withdrew an up-vote, 2 withdrew a down-vote, 0 the user had
-- not voted (nothing changed); the error replies 'NOARTICLE' (no such
-- article) and 'VOTINGCLOSED' refuse having written nothing, not even a
-- record (a re-send is refused alike).
-- Votes can be withdrawn while voting is open, by the same rule as
-- vote.lua: the server's TIME is before the post time (the score in
-- KEYS[1]) plus the window. Once it closes the voters' sets have expired:
-- there is nothing left to withdraw. Every key, and the counters it
-- decrements, is checked before the first write.
local timeKey, scoreKey, article, voted, downvoted = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id, user = ARGV[1], ARGV[2]
local weight = tonumber(ARGV[3])
local window = tonumber(ARGV[4])

local bad = vote_check(timeKey, scoreKey, article, voted, downvoted)
if bad then return bad end
local closed = vote_closed(timeKey, id, window, article)
if closed then return closed end

if redis.call('SREM', voted, user) == 1 then
  redis.call('HINCRBY', article, 'votes', -1)
  redis.call('ZINCRBY', scoreKey, -weight, id)
  return 1
end
if redis.call('SREM', downvoted, user) == 1 then
  redis.call('HINCRBY', article, 'downvotes', -1)
  redis.call('ZINCRBY', scoreKey, weight, id)
  return 2
end
return 0
