-- search.lua: run a parsed query on one shard and cache its ordered result
-- for later pages (book 7.1.2-7.2.1: intersect, union, difference,
-- search_and_sort, search_and_zsort). The temporary keys and the cache
-- share the shard's hash tag, so the script touches one slot.
-- KEYS[1] document HASH prefix    KEYS[2] posting prefix
-- KEYS[3] score ZSET prefix       KEYS[4] cache prefix (<cache prefix><sid>)
-- ARGV[1] cache TTL ms   ARGV[2] offset   ARGV[3] count (entries returned)
-- ARGV[4] mode: 'doc' (by document number: index order), 'id' (by
--         document ID), 'num' or 'text' (by stored field ARGV[5]), 'z' (by
--         weighted scores), 'rel' (BM25)   ARGV[6] '1' descending
-- KEYS[5] stats HASH (docs, len) for relevance
-- KEYS[6] HASH document number -> ID
-- ARGV[7] number of groups, then for each: n, n terms (tokens 't:...');
--         then m exclusions, m tokens; then k weights, k x (score, weight);
--         then for mode 'rel' (BM25): r wanted tokens, r tokens, then
--         'local' (this shard's statistics) or 'global', N, total length,
--         r document frequencies (a sharded index's statistics)
-- returns {total, {id, sort key, ...}} of entries offset .. offset+count-1
-- in order: by key (numbers numerically, strings by bytes), then by ID.
-- Only the first offset+count entries are ordered (a bounded heap, or the
-- first bits of a bitmap in index order), not the whole result. Writes
-- only its own cache and temporary keys it deletes: <sid>:c, a LIST of
-- the total, the sort spec (common.lua's enc_spec; '' when the entries
-- are the whole result), then ID and sort key of each of the first
-- offset+count entries in order; and, when the result has more, the
-- result's document numbers (<sid>:s, a STRING "n,n,...", or <sid>:b, a
-- bitmap), from which page.lua takes or orders the rest when a page goes
-- past the entries.
--
-- Postings are SETs or bitmaps (common.lua). When an AND-ed group holds
-- SETs only, SINTER (or SMEMBERS) gives the candidates and the other
-- groups and the exclusions filter them in Lua: a bitmap by its bits (one
-- GET, or GETBIT per candidate when they are few), a SET by SMISMEMBER
-- or, when it is the smaller, its members in a Lua table (not SDIFF:
-- Redis 7.0 builds its result as a set, 0.2 µs a member). Else the
-- bitmaps compute it (BITOP AND, OR, NOT; BITCOUNT), a SET synonym's
-- members set into a copy, an excluded SET's members cleared where the
-- result has them.
local dpre, ppre, zpre, cpre, stats, dnums = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local ttl, offset, count = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local mode, field = ARGV[4], ARGV[5]
local lkey, skey, bkey, tpre = cpre .. ':c', cpre .. ':s', cpre .. ':b', cpre .. ':t:'

local a = 7
local groups, excl = {}, {}
-- The cache keys are new (a fresh search ID) unless this is a re-send:
-- one EXISTS, and their types checked only then.
local fresh = redis.call('EXISTS', lkey, skey, bkey) == 0
local spec = {dnums, 'hash', 'search document numbers'}
if not fresh then
  local cached = {lkey, 'list', 'search cached result', skey, 'string', 'search cached result',
    bkey, 'string', 'search cached result'}
  for _, v in ipairs(cached) do spec[#spec + 1] = v end
end
local ptype = {} -- posting key -> 'none', 'set' or 'string'
local postings = {}
local q = {mode, field, ARGV[6]} -- the sort spec
local ng = tonumber(ARGV[a]); a = a + 1
for g = 1, ng do
  local n = tonumber(ARGV[a]); a = a + 1
  local terms = {}
  for i = 0, n - 1 do
    terms[#terms + 1] = ppre .. ARGV[a + i]
    postings[#postings + 1] = ppre .. ARGV[a + i]
  end
  a = a + n
  groups[g] = terms
end
local m = tonumber(ARGV[a]); a = a + 1
for i = 0, m - 1 do
  excl[#excl + 1] = ppre .. ARGV[a + i]
  postings[#postings + 1] = ppre .. ARGV[a + i]
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
for _, key in ipairs(postings) do
  local t, err = posting_type(key)
  if not t then return err end
  ptype[key] = t
end
if mode == 'rel' then
  local N, total
  if ARGV[a] == 'global' then
    N, total = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
    for i, t in ipairs(rel) do t.df = tonumber(ARGV[a + 2 + i]) end
  else
    bad = check_len(stats, 'docs', 'search index stats') or check_len(stats, 'len', 'search index stats')
    if bad then return bad end
    local v = redis.call('HMGET', stats, 'docs', 'len')
    N, total = tonumber(v[1] or '0'), tonumber(v[2] or '0')
    for _, t in ipairs(rel) do
      local key = ppre .. t.tok
      if not ptype[key] then
        local pt, err = posting_type(key)
        if not pt then return err end
        ptype[key] = pt
      end
      t.df = posting_card(key, ptype[key])
    end
  end
  q[#q + 1] = #rel
  for _, t in ipairs(rel) do q[#q + 1] = t.tok end
  q[#q + 1] = N; q[#q + 1] = total
  for _, t in ipairs(rel) do q[#q + 1] = t.df end
end
local sspec = parse_spec(q, zpre)

-- Set operations. The groups without a posting left match nothing; the
-- others hold SETs only (sgroups) or a bitmap (bgroups).
local temps, istemp = {}, {}
local function temp()
  local t = tpre .. (#temps + 1)
  temps[#temps + 1] = t
  istemp[t] = true
  return t
end
local function done()
  if #temps > 0 then redis.call('DEL', unpack(temps)) end
end
local serr -- an error of set_bits (BITFIELD), answered once temps are gone
local sgroups, bgroups, sex, bex = {}, {}, {}, {}
local none = false
for _, terms in ipairs(groups) do
  local g, bits = {}, false
  for _, key in ipairs(terms) do
    if ptype[key] ~= 'none' then
      g[#g + 1] = key
      bits = bits or ptype[key] == 'string'
    end
  end
  if #g == 0 then none = true elseif bits then bgroups[#bgroups + 1] = g else sgroups[#sgroups + 1] = g end
end
for _, key in ipairs(excl) do
  if ptype[key] == 'set' then sex[#sex + 1] = key elseif ptype[key] == 'string' then bex[#bex + 1] = key end
end

local function union(g) -- a group of SETs as one key
  if #g == 1 then return g[1] end
  local t = temp()
  redis.call('SUNIONSTORE', t, unpack(g))
  return t
end

-- filter returns the documents of nums (strings) and vals (the same as
-- numbers) that are (want true) or are not (want false) in one of the
-- postings keys: a bitmap's bits are tested in Lua (one GET; GETBIT per
-- candidate when they are few), a SET's by SMISMEMBER, or by its members
-- in a Lua table when it is the smaller.
local byte = string.byte
local function filter(nums, vals, keys, want)
  local strs, probe, inset = {}, {}, nil
  for _, key in ipairs(keys) do
    if ptype[key] == 'string' then
      -- A GET copies the whole bitmap into Lua (about 1 µs per 1,000
      -- bytes); a few candidates are cheaper by GETBIT each (0.6 µs).
      if #nums <= 32 and #nums * 512 < redis.call('STRLEN', key) then
        probe[#probe + 1] = key
      else
        strs[#strs + 1] = redis.call('GET', key) or ''
      end
    elseif redis.call('SCARD', key) * 2 < #nums then
      -- A SET smaller than the candidates: its members looked up in Lua.
      inset = inset or {}
      local has = {}
      for _, n in ipairs(redis.call('SMEMBERS', key)) do has[n] = true end
      for i = 1, #nums do
        if has[nums[i]] then inset[i] = true end
      end
    else
      inset = inset or {}
      for i = 1, #nums, CHUNK do
        local last = math.min(i + CHUNK - 1, #nums)
        local r = redis.call('SMISMEMBER', key, unpack(nums, i, last))
        for j = i, last do
          if r[j - i + 1] == 1 then inset[j] = true end
        end
      end
    end
  end
  local on, ov, ns = {}, {}, #strs
  for i = 1, #nums do
    local hit = inset ~= nil and inset[i] == true
    if not hit then
      local n = vals[i]
      local r = n % 8
      local b, m = (n - r) / 8 + 1, P2[r + 1]
      for j = 1, ns do
        local v = byte(strs[j], b)
        if v and v % (m + m) >= m then
          hit = true
          break
        end
      end
      for j = 1, #probe do
        if hit then break end
        hit = redis.call('GETBIT', probe[j], n) == 1
      end
    end
    if hit == want then
      on[#on + 1] = nums[i]; ov[#ov + 1] = vals[i]
    end
  end
  return on, ov
end

-- Either nums (document numbers, SET path; vals: as numbers) or res (a
-- bitmap key).
local nums, vals, res
-- A posting holding something else than document numbers (written by
-- someone else) fails the set operations: a Lua error or serr. fail then
-- names the posting, once the temporary keys are gone.
local function fail(err)
  done()
  for _, key in ipairs(postings) do
    if ptype[key] == 'set' then
      for _, m in ipairs(redis.call('SMEMBERS', key)) do
        if not is_docnum(m) then return bad_docnum(key, 'search posting', m) end
      end
    end
  end
  if type(err) == 'table' then return err end
  return redis.error_reply('ERR search: ' .. tostring(err))
end
local ok, perr = pcall(function()
  if none then
    nums, vals = {}, {}
  elseif #sgroups > 0 then
    local keys = {}
    for _, g in ipairs(sgroups) do keys[#keys + 1] = union(g) end
    if #keys == 1 then nums = redis.call('SMEMBERS', keys[1]) else nums = redis.call('SINTER', unpack(keys)) end
    -- Keep the documents of every bitmap group and of no exclusion.
    if #nums > 0 and (#bgroups > 0 or #sex > 0 or #bex > 0) then
      vals = {}
      for i = 1, #nums do vals[i] = nums[i] + 0 end
      for _, g in ipairs(bgroups) do
        if #nums == 0 then break end
        nums, vals = filter(nums, vals, g, true)
      end
      local ex = {}
      for _, key in ipairs(sex) do ex[#ex + 1] = key end
      for _, key in ipairs(bex) do ex[#ex + 1] = key end
      if #ex > 0 and #nums > 0 then nums, vals = filter(nums, vals, ex, false) end
    end
  else
    -- Bitmaps: OR each group (its SETs' members set in), AND the groups,
    -- clear the exclusions.
    local keys = {}
    for _, g in ipairs(bgroups) do
      if #g == 1 then
        keys[#keys + 1] = g[1]
      else
        local t, bits, sets = temp(), {}, {}
        for _, key in ipairs(g) do
          if ptype[key] == 'string' then bits[#bits + 1] = key else sets[#sets + 1] = key end
        end
        redis.call('BITOP', 'OR', t, unpack(bits))
        for _, key in ipairs(sets) do serr = serr or set_bits(t, redis.call('SMEMBERS', key), 1) end
        keys[#keys + 1] = t
      end
    end
    if #keys == 1 and #sex == 0 and #bex == 0 then
      res = keys[1] -- read only
    else
      res = temp()
      redis.call('BITOP', 'AND', res, unpack(keys))
      local len = 0
      if #bex > 0 or #sex > 0 then len = redis.call('STRLEN', res) end
      if #bex > 0 and len > 0 then
        local ex = temp()
        redis.call('BITOP', 'OR', ex, unpack(bex))
        if redis.call('STRLEN', ex) < len then redis.call('SETBIT', ex, len * 8 - 1, 0) end
        redis.call('BITOP', 'NOT', ex, ex)
        redis.call('BITOP', 'AND', res, res, ex)
      end
      if #sex > 0 and len > 0 then
        -- Clear only the excluded documents that the result holds.
        local bits, clear, seen = redis.call('GET', res), {}, {}
        for _, key in ipairs(sex) do
          for _, n in ipairs(redis.call('SMEMBERS', key)) do
            local v = n + 0
            local r = v % 8
            local x, m = byte(bits, (v - r) / 8 + 1), P2[r + 1]
            if x and x % (m + m) >= m and not seen[v] then
              seen[v] = true
              clear[#clear + 1] = n
            end
          end
        end
        serr = serr or set_bits(res, clear, 0)
      end
    end
  end
end)
if not ok then return fail(perr) end
if serr then return fail(serr) end
local total
if res then total = redis.call('BITCOUNT', res) else total = #nums end
if total == 0 then
  done()
  if not fresh then redis.call('DEL', lkey, skey, bkey) end
  redis.call('RPUSH', lkey, 0, '')
  redis.call('PEXPIRE', lkey, ttl)
  return {0, {}}
end

-- Order the first offset+count entries only. In index order, those are
-- the smallest numbers: the first bits of a bitmap, or a bounded heap of
-- the SET path's numbers; only their IDs are read.
local want = offset + count
local ids, ks, ns, order
if mode == 'doc' and not sspec.desc then
  local sel
  if res then
    sel = first_bits(res, want)
  else
    if not vals then
      vals = {}
      ok, perr = pcall(function()
        for i = 1, #nums do vals[i] = nums[i] + 0 end
      end)
      if not ok then return fail(perr) end
    end
    sel = smallest(vals, want)
  end
  ids, ks, ns = fetch_entries(sel, sspec, dpre, dnums, true)
  order = {}
  if ids then
    for i = 1, #ids do order[i] = i end
  end
else
  if res then nums = all_bits(res) end
  ids, ks, ns = fetch_entries(nums, sspec, dpre, dnums, true)
  if ids then
    local skeys -- IDs: distinct, compared by < when it is byte order
    if mode == 'id' and not sspec.desc and BYTE_ORDER then skeys = ids end
    order = top_k(#ids, want, make_less(sspec, ids, ks, ns), skeys)
  end
end
if not ids then
  done()
  return ks
end
-- The cache: total, the sort spec when the result has more than these
-- entries, the entries; and the rest's numbers, for page.lua.
local more = #order < total
if not fresh then redis.call('DEL', lkey, skey, bkey) end -- a re-send's first run
call_chunked('RPUSH', lkey, entry_items({total, more and enc_spec(q) or ''}, sspec, ids, ks, ns, order, 1))
redis.call('PEXPIRE', lkey, ttl)
if more then
  if res then
    if istemp[res] then
      redis.call('RENAME', res, bkey)
    else
      redis.call('BITOP', 'AND', bkey, res)
    end
    redis.call('PEXPIRE', bkey, ttl)
  else
    redis.call('SET', skey, table.concat(nums, ','), 'PX', ttl)
  end
end
done()
local out = {}
for i = offset + 1, math.min(want, #order) do
  local j = order[i]
  out[#out + 1] = ids[j]; out[#out + 1] = entry_key(sspec, ks, ns, j)
end
return {total, out}
