-- votable.lua: what vote.lua, unvote.lua and voteof.lua share (prepended
-- to each): the checks of a vote's keys, and the voting window.

-- vote_check checks the types of a vote's keys, and the article's vote
-- counters; scoreKey and article may be nil (a read of the voters only).
-- It returns the check error, or nil.
local function vote_check(timeKey, scoreKey, article, voted, downvoted)
  local spec = {timeKey, 'zset', 'voting time index'}
  if scoreKey then
    spec[#spec + 1], spec[#spec + 2], spec[#spec + 3] = scoreKey, 'zset', 'voting score index'
  end
  if article then
    spec[#spec + 1], spec[#spec + 2], spec[#spec + 3] = article, 'hash', 'voting article'
  end
  spec[#spec + 1], spec[#spec + 2], spec[#spec + 3] = voted, 'set', 'voting up-voters'
  spec[#spec + 1], spec[#spec + 2], spec[#spec + 3] = downvoted, 'set', 'voting down-voters'
  return check_types(spec)
    or (article and (check_hint(article, 'votes', 'voting article') or check_hint(article, 'downvotes', 'voting article')))
    or nil
end

-- vote_closed returns nil and the post time (Unix s) of article id while
-- voting on it is open: the server's TIME is before its post time (its
-- score in the time index timeKey) plus window seconds; else the refusal
-- NOARTICLE or VOTINGCLOSED. Given the article's hash key, an article
-- whose hash is gone (deleted by hand, evicted) is NOARTICLE too, as Get
-- says: a vote must not re-create it as a bare counter.
local function vote_closed(timeKey, id, window, article)
  local posted = redis.call('ZSCORE', timeKey, id)
  if not posted or (article and redis.call('EXISTS', article) == 0) then
    return redis.error_reply('NOARTICLE voting: no such article')
  end
  local raw = posted
  posted = tonumber(raw)
  if raw == '-inf' then posted = -math.huge end -- some servers' Lua reads no 'inf'
  -- A post time whose window ends beyond 2^53 ms (inf, 1e20: no time Post
  -- writes) kept voting open and gave the voters' set the expiry INT64_MIN,
  -- deleting it after the vote was counted.
  if not posted or (posted + window) * 1000 >= 9007199254740992 then
    return key_error('CORRUPT', timeKey, 'voting time index', string.format('%q', string.sub(raw, 1, 40)),
      'a post time in s whose voting window ends before 2^53 ms')
  end
  local t = redis.call('TIME')
  if tonumber(t[1]) + tonumber(t[2]) / 1000000 >= posted + window then
    return redis.error_reply('VOTINGCLOSED voting: voting closed')
  end
  return nil, posted
end
