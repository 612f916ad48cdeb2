-- voteof.lua: read user's vote on an article, while voting on it is open.
-- KEYS[1] time       ZSET article ID -> post time (server Unix s)
-- KEYS[2] voted      SET of up-voters
-- KEYS[3] downvoted  SET of down-voters
-- ARGV[1] article ID   ARGV[2] user   ARGV[3] voting window (s)
-- returns 1 up-voted, -1 down-voted, 0 no vote; the error replies
-- 'NOARTICLE' (no such article) and 'VOTINGCLOSED' (the voters' sets
-- expire when voting closes: who voted is no longer known). Writes
-- nothing. The window rule is vote.lua's, by the server's TIME.
local timeKey, voted, downvoted = KEYS[1], KEYS[2], KEYS[3]
local id, user = ARGV[1], ARGV[2]
local window = tonumber(ARGV[3])

local bad = vote_check(timeKey, nil, nil, voted, downvoted)
if bad then return bad end
local closed = vote_closed(timeKey, id, window)
if closed then return closed end

if redis.call('SISMEMBER', voted, user) == 1 then return 1 end
if redis.call('SISMEMBER', downvoted, user) == 1 then return -1 end
return 0
