-- stats.lua: one shard's part of a sharded index's BM25 statistics.
-- KEYS[1] stats HASH (docs, len)   KEYS[2..] postings
-- returns {docs, len, the documents of each posting}
local bad = check_types({KEYS[1], 'hash', 'search index stats'})
  or check_len(KEYS[1], 'docs', 'search index stats') or check_len(KEYS[1], 'len', 'search index stats')
if bad then return bad end
local types = {}
for i = 2, #KEYS do
  local t, err = posting_type(KEYS[i])
  if not t then return err end
  types[i] = t
end
local v = redis.call('HMGET', KEYS[1], 'docs', 'len')
local out = {tonumber(v[1] or '0'), tonumber(v[2] or '0')}
for i = 2, #KEYS do out[i + 1] = posting_card(KEYS[i], types[i]) end
return out
