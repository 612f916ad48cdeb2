-- search.lua: run a parsed query on one shard and cache its ordered result
-- for later pages (book 7.1.2-7.2.1: intersect, union, difference,
-- search_and_sort, search_and_zsort). The temporary sets and the cache
-- share the shard's hash tag, so the script touches one slot.
-- KEYS[1] document HASH prefix    KEYS[2] SET posting prefix
-- KEYS[3] score ZSET prefix       KEYS[4] cache prefix (<cache prefix><sid>)
-- ARGV[1] cache TTL ms   ARGV[2] offset   ARGV[3] count (entries returned)
-- ARGV[4] mode: 'id' (by document ID), 'num' or 'text' (by stored field
--         ARGV[5]), 'z' (by weighted scores)   ARGV[6] '1' descending
-- KEYS[5] stats HASH (docs, len) for relevance
-- ARGV[7] number of groups, then for each: n, n terms (tokens 't:...');
--         then m exclusions, m tokens; then k weights, k x (score, weight);
--         then for mode 'rel' (BM25): r wanted tokens, r tokens, then
--         'local' (this shard's statistics) or 'global', N, total length,
--         r document frequencies (a sharded index's statistics)
-- returns {total, {id, sort key, ...}} of entries offset .. offset+count-1
-- in order: by key (numbers numerically, strings by bytes), then by ID.
-- Writes only its own cache (<sid>:l ids, <sid>:k keys, <sid>:n total)
-- and temporary keys it deletes.
local dpre, ppre, zpre, cpre, stats = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local ttl, offset, count = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local mode, field, desc = ARGV[4], ARGV[5], ARGV[6] == '1'
local lkey, kkey, nkey, tpre = cpre .. ':l', cpre .. ':k', cpre .. ':n', cpre .. ':t:'

local a = 7
local groups, excl, weights = {}, {}, {}
local spec = {lkey, 'list', 'search cached result', kkey, 'list', 'search cached result',
  nkey, 'string', 'search cached result'}
local ng = tonumber(ARGV[a]); a = a + 1
for g = 1, ng do
  local n = tonumber(ARGV[a]); a = a + 1
  local terms = {}
  for i = 0, n - 1 do
    terms[#terms + 1] = ppre .. ARGV[a + i]
    spec[#spec + 1] = ppre .. ARGV[a + i]; spec[#spec + 1] = 'set'; spec[#spec + 1] = 'search posting'
  end
  a = a + n
  groups[g] = terms
end
local m = tonumber(ARGV[a]); a = a + 1
for i = 0, m - 1 do
  excl[#excl + 1] = ppre .. ARGV[a + i]
  spec[#spec + 1] = ppre .. ARGV[a + i]; spec[#spec + 1] = 'set'; spec[#spec + 1] = 'search posting'
end
a = a + m
local k = tonumber(ARGV[a]); a = a + 1
for i = 0, k - 1 do
  local zk = zpre .. ARGV[a + 2 * i]
  weights[#weights + 1] = {zk, tonumber(ARGV[a + 2 * i + 1])}
  spec[#spec + 1] = zk; spec[#spec + 1] = 'zset'; spec[#spec + 1] = 'search score'
end
local rel = {}
if mode == 'rel' then
  local r = tonumber(ARGV[a]); a = a + 1
  for i = 0, r - 1 do rel[#rel + 1] = {tok = ARGV[a + i]} end
  a = a + r
  spec[#spec + 1] = stats; spec[#spec + 1] = 'hash'; spec[#spec + 1] = 'search index stats'
end
local bad = check_types(spec)
if bad then return bad end
local N, avglen = 0, 0
if mode == 'rel' then
  local total
  if ARGV[a] == 'global' then
    N, total = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
    for i, t in ipairs(rel) do t.df = tonumber(ARGV[a + 2 + i]) end
  else
    local v = redis.call('HMGET', stats, 'docs', 'len')
    N, total = tonumber(v[1] or '0') or 0, tonumber(v[2] or '0') or 0
    for _, t in ipairs(rel) do t.df = redis.call('SCARD', ppre .. t.tok) end
  end
  if N > 0 then avglen = total / N end
  for _, t in ipairs(rel) do t.idf = math.log(1 + (N - t.df + 0.5) / (t.df + 0.5)) end
end

-- Set operations: union each group, intersect the groups, subtract.
local temps = {}
local function temp()
  local t = tpre .. (#temps + 1)
  temps[#temps + 1] = t
  return t
end
local keys = {}
for _, terms in ipairs(groups) do
  if #terms == 1 then
    keys[#keys + 1] = terms[1]
  else
    local t = temp()
    redis.call('SUNIONSTORE', t, unpack(terms))
    keys[#keys + 1] = t
  end
end
local res = temp()
redis.call('SINTERSTORE', res, unpack(keys))
if #excl > 0 then redis.call('SDIFFSTORE', res, res, unpack(excl)) end
local nums = redis.call('SMEMBERS', res)
for _, t in ipairs(temps) do redis.call('DEL', t) end

-- Sort keys.
local function bless(x, y) -- x < y by bytes
  local n = math.min(#x, #y)
  for i = 1, n do
    local p, q = string.byte(x, i), string.byte(y, i)
    if p ~= q then return p < q end
  end
  return #x < #y
end
local entries = {}
for _, num in ipairs(nums) do
  local dk = dpre .. num
  local e
  if mode == 'num' or mode == 'text' then
    local v = redis.call('HMGET', dk, '#id', 's:' .. field)
    e = {id = v[1], key = v[2] or (mode == 'num' and '0' or '')}
    if mode == 'num' then e.n = tonumber(e.key) or 0 end
  else
    e = {id = redis.call('HGET', dk, '#id')}
    if mode == 'rel' then
      local f = {'#id', '#n'}
      for _, t in ipairs(rel) do f[#f + 1] = t.tok end
      local v = redis.call('HMGET', dk, unpack(f))
      e.id = v[1]
      local len = tonumber(v[2] or '0') or 0
      local s = 0
      for i, t in ipairs(rel) do
        local tf = tonumber(v[i + 2] or '0') or 0
        if tf > 0 then
          local norm = 1.2 * (0.25 + 0.75 * (avglen > 0 and len / avglen or 1))
          s = s + t.idf * tf * 2.2 / (tf + norm)
        end
      end
      e.n = s
      e.key = fmt_score(s)
    elseif mode == 'z' then
      local s = 0
      for _, w in ipairs(weights) do
        local z = redis.call('ZSCORE', w[1], num)
        if z then s = s + tonumber(z) * w[2] end
      end
      e.n = s
      e.key = fmt_score(s)
    else
      e.key = e.id
    end
  end
  if not e.id then
    return key_error('CORRUPT', dk, 'search document', 'no #id', 'the document of a posting')
  end
  entries[#entries + 1] = e
end
local numeric = mode == 'num' or mode == 'z' or mode == 'rel'
table.sort(entries, function(x, y)
  if numeric then
    if x.n ~= y.n then
      if desc then return x.n > y.n end
      return x.n < y.n
    end
  elseif x.key ~= y.key then
    if desc then return bless(y.key, x.key) end
    return bless(x.key, y.key)
  end
  return bless(x.id, y.id)
end)

-- Cache and answer.
redis.call('DEL', lkey, kkey)
redis.call('SET', nkey, #entries, 'PX', ttl)
local out = {}
local ids, ks = {}, {}
for i, e in ipairs(entries) do
  ids[#ids + 1] = e.id
  ks[#ks + 1] = e.key
  if #ids == CHUNK then
    redis.call('RPUSH', lkey, unpack(ids)); redis.call('RPUSH', kkey, unpack(ks))
    ids, ks = {}, {}
  end
  if i > offset and i <= offset + count then
    out[#out + 1] = e.id; out[#out + 1] = e.key
  end
end
if #ids > 0 then redis.call('RPUSH', lkey, unpack(ids)); redis.call('RPUSH', kkey, unpack(ks)) end
if #entries > 0 then
  redis.call('PEXPIRE', lkey, ttl); redis.call('PEXPIRE', kkey, ttl)
end
return {#entries, out}
