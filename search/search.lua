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
-- KEYS[6] HASH document number -> ID
-- ARGV[7] number of groups, then for each: n, n terms (tokens 't:...');
--         then m exclusions, m tokens; then k weights, k x (score, weight);
--         then for mode 'rel' (BM25): r wanted tokens, r tokens, then
--         'local' (this shard's statistics) or 'global', N, total length,
--         r document frequencies (a sharded index's statistics)
-- returns {total, {id, sort key, ...}} of entries offset .. offset+count-1
-- in order: by key (numbers numerically, strings by bytes), then by ID.
-- Only the first offset+count entries are ordered (a bounded heap), not
-- the whole result. Writes only its own cache and temporary keys it
-- deletes: <sid>:n total; <sid>:l ids and <sid>:k keys of the first
-- offset+count entries in order; and, when the result has more, <sid>:s
-- the result's document numbers (a STRING "n,n,...") and <sid>:q its sort
-- spec (common.lua), from which page.lua orders the rest when a page goes
-- past <sid>:l.
local dpre, ppre, zpre, cpre, stats, dnums = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local ttl, offset, count = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local mode, field = ARGV[4], ARGV[5]
local lkey, kkey, nkey, tpre = cpre .. ':l', cpre .. ':k', cpre .. ':n', cpre .. ':t:'
local skey, qkey = cpre .. ':s', cpre .. ':q'

local a = 7
local groups, excl = {}, {}
local spec = {lkey, 'list', 'search cached result', kkey, 'list', 'search cached result',
  nkey, 'string', 'search cached result', skey, 'string', 'search cached result',
  qkey, 'list', 'search cached result', dnums, 'hash', 'search document numbers'}
local q = {mode, field, ARGV[6]} -- the sort spec
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
q[#q + 1] = k
for i = 0, k - 1 do
  local zk = zpre .. ARGV[a + 2 * i]
  q[#q + 1] = ARGV[a + 2 * i]; q[#q + 1] = ARGV[a + 2 * i + 1]
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
if mode == 'rel' then
  local N, total
  if ARGV[a] == 'global' then
    N, total = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
    for i, t in ipairs(rel) do t.df = tonumber(ARGV[a + 2 + i]) end
  else
    local v = redis.call('HMGET', stats, 'docs', 'len')
    N, total = tonumber(v[1] or '0') or 0, tonumber(v[2] or '0') or 0
    for _, t in ipairs(rel) do t.df = redis.call('SCARD', ppre .. t.tok) end
  end
  q[#q + 1] = #rel
  for _, t in ipairs(rel) do q[#q + 1] = t.tok end
  q[#q + 1] = N; q[#q + 1] = total
  for _, t in ipairs(rel) do q[#q + 1] = t.df end
end
local sspec = parse_spec(q, zpre)

-- Set operations: union each group, intersect the groups, subtract; the
-- members come back to the script (SMEMBERS, SINTER or SDIFF), nothing
-- is stored but temporary unions.
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
local nums
if #excl == 0 then
  if #keys == 1 then nums = redis.call('SMEMBERS', keys[1]) else nums = redis.call('SINTER', unpack(keys)) end
else
  local first = keys[1]
  if #keys > 1 then
    first = temp()
    redis.call('SINTERSTORE', first, unpack(keys))
  end
  nums = redis.call('SDIFF', first, unpack(excl))
end
if #temps > 0 then redis.call('DEL', unpack(temps)) end
local total = #nums
redis.call('DEL', lkey, kkey, skey, qkey)
redis.call('SET', nkey, total, 'PX', ttl)
if total == 0 then return {0, {}} end

-- Order the first offset+count entries only.
local ids, ks, ns = fetch_entries(nums, sspec, dpre, dnums, true)
if not ids then
  redis.call('DEL', nkey)
  return ks
end
local skeys -- IDs: distinct, compared by < when it is byte order
if mode == 'id' and not sspec.desc and BYTE_ORDER then skeys = ids end
local order = top_k(#ids, offset + count, make_less(sspec, ids, ks, ns), skeys)
push_entries(lkey, kkey, sspec, ids, ks, ns, order, 1)
redis.call('PEXPIRE', lkey, ttl); redis.call('PEXPIRE', kkey, ttl)
if #order < #ids then
  -- The rest, for page.lua: the numbers, and how to order them.
  redis.call('SET', skey, table.concat(nums, ','), 'PX', ttl)
  call_chunked('RPUSH', qkey, q)
  redis.call('PEXPIRE', qkey, ttl)
end
local out = {}
for i = offset + 1, math.min(offset + count, #order) do
  local j = order[i]
  out[#out + 1] = ids[j]; out[#out + 1] = entry_key(sspec, ks, ns, j)
end
return {total, out}
