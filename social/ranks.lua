-- ranks.lua: rank_ends, shared by post.lua and bounds.lua (prepended).

-- rank_ends appends to out the scores (follower sequence numbers) of the
-- members of ZSET key at ranks before + step, before + 2 * step, ... and
-- before + n (counted from 1): the last target of each feed call over the
-- n members after the first before, found by rank (O(log N) each) without
-- reading them. It returns out.
local function rank_ends(key, before, n, step, out)
  local pos = 0
  while pos < n do
    pos = math.min(pos + step, n)
    out[#out + 1] = tonumber(redis.call('ZRANGE', key, before + pos - 1, before + pos - 1, 'WITHSCORES')[2])
  end
  return out
end
