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

local bad = check_types({timeKey, 'zset', 'voting time index',
  voted, 'set', 'voting up-voters', downvoted, 'set', 'voting down-voters'})
if bad then return bad end

local posted = redis.call('ZSCORE', timeKey, id)
if not posted then return redis.error_reply('NOARTICLE voting: no such article') end
posted = tonumber(posted)
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
if now >= posted + window then return redis.error_reply('VOTINGCLOSED voting: voting closed') end

if redis.call('SISMEMBER', voted, user) == 1 then return 1 end
if redis.call('SISMEMBER', downvoted, user) == 1 then return -1 end
return 0
