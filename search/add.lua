-- add.lua: index (or re-index) a batch of documents of one shard, each
-- atomically with the others (book 7.1.1, index_document, plus clean
-- re-indexing). A re-indexed document keeps its number; its postings
-- become exactly those of its new tokens (the ones it no longer has are
-- removed); its stored fields are replaced; its scores are set where given
-- and kept otherwise. Run as a once-script (search.go): a re-send after a
-- lost reply is answered from the first run's record and writes nothing,
-- so it cannot undo a later Add or Remove of the same document.
-- KEYS[1] ids     HASH document ID -> number
-- KEYS[2] stats   HASH seq, docs, len
-- KEYS[3] document HASH prefix    KEYS[4] posting prefix (SET or bitmap)
-- KEYS[5] score ZSET prefix       KEYS[6] nums HASH document number -> ID
-- ARGV[1] bitmap threshold   ARGV[2] number of documents, then for each:
--         ID, number ('0': the next of the shard's own sequence; else
--         the number a sharded index reserved for it, used if it is
--         above every number the shard has used, else the next one),
--         length (terms, repeats included), n tokens, n x (token, count),
--         m fields, m x (hash field, value), k scores, k x (name, score)
-- A term's posting is a SET until it holds more than max(threshold,
-- seq/256) documents, then a bitmap (common.lua): at most 8 times the
-- memory of an intset of that many numbers, read by a query in C rather
-- than member by member in Lua (the package doc).
-- A bitmap stays one; it goes with its last document.
-- returns {documents added, documents replaced}
-- Every key, and every value parsed, is checked before the first write.
-- CHECK_ONLY (set by the Go source before this one): run the checks only,
-- write nothing and return {0, 0} (the check pass of a sharded Add; the
-- numbers reserved for the batch are not passed then: '0').
local ids, stats, dpre, ppre, zpre, dnums = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]

local bad = check_types({ids, 'hash', 'search document IDs', stats, 'hash', 'search index stats',
  dnums, 'hash', 'search document numbers'})
  or check_len(stats, 'seq', 'search index stats') or check_len(stats, 'docs', 'search index stats')
  or check_len(stats, 'len', 'search index stats')
if bad then return bad end

local seq = tonumber(redis.call('HGET', stats, 'seq') or '0')
local nextnum = seq
local docs = {}
local zkeys = {}
local threshold = tonumber(ARGV[1])
local a = 3
for _ = 1, tonumber(ARGV[2]) do
  local doc = {ext = ARGV[a], given = tonumber(ARGV[a + 1]), len = tonumber(ARGV[a + 2]), toks = {}, fields = {}, scores = {}}
  a = a + 3
  local n = tonumber(ARGV[a]); a = a + 1
  for _ = 1, n do doc.toks[ARGV[a]] = ARGV[a + 1]; a = a + 2 end
  n = tonumber(ARGV[a]); a = a + 1
  for _ = 1, n do doc.fields[#doc.fields + 1] = ARGV[a]; doc.fields[#doc.fields + 1] = ARGV[a + 1]; a = a + 2 end
  n = tonumber(ARGV[a]); a = a + 1
  for _ = 1, n do
    doc.scores[#doc.scores + 1] = {ARGV[a], ARGV[a + 1]}
    zkeys[ARGV[a]] = true
    a = a + 2
  end
  docs[#docs + 1] = doc
end

-- Read the documents that exist, and number the new ones.
local add, rem = {}, {}
local lendelta, added = 0, 0
for _, doc in ipairs(docs) do
  local num = redis.call('HGET', ids, doc.ext)
  local old = {}
  if num then
    if not is_docnum(num) then return bad_docnum(ids, 'search document IDs', num) end
    local dk = dpre .. num
    local h = redis.pcall('HGETALL', dk)
    if h.err then return key_error('WRONGTYPE', dk, 'search document', 'a ' .. redis.call('TYPE', dk).ok, 'a hash') end
    local fields = {}
    for i = 1, #h, 2 do fields[h[i]] = h[i + 1] end
    if fields['#id'] ~= doc.ext or not is_len(fields['#n'] or '') then
      return key_error('CORRUPT', dk, 'search document', string.format('%q', string.sub(fields['#id'] or 'missing', 1, 40)),
        'the document ' .. string.format('%q', doc.ext) .. ' with its length')
    end
    for f in pairs(fields) do
      local p = string.sub(f, 1, 2)
      if p == 't:' then old[f] = true end
    end
    lendelta = lendelta - tonumber(fields['#n'])
    doc.exists = true
  else
    -- A reserved number is taken when it is above every number the shard
    -- has used (always, unless the index's counter lags its shards'):
    -- numbers stay unique and are never reused.
    if doc.given > nextnum then
      num = tostring(doc.given)
      nextnum = math.max(nextnum, doc.given)
    else
      nextnum = nextnum + 1
      num = tostring(nextnum)
    end
    local dk = dpre .. num
    local t = redis.call('TYPE', dk).ok
    if t ~= 'none' and t ~= 'hash' then
      return key_error('WRONGTYPE', dk, 'search document', 'a ' .. t, 'a hash')
    elseif t ~= 'none' then
      return key_error('CORRUPT', stats, 'search index stats field seq', seq, 'at least every document number')
    end
    added = added + 1
  end
  doc.num = num
  lendelta = lendelta + doc.len
  for tok in pairs(doc.toks) do
    if not old[tok] then
      local l = add[tok]
      if l then l[#l + 1] = num else add[tok] = {num} end
    end
  end
  for tok in pairs(old) do
    if not doc.toks[tok] then
      local l = rem[tok]
      if l then l[#l + 1] = num else rem[tok] = {num} end
    end
  end
end

if nextnum > 4294967295 then -- SETBIT's last bit
  return key_error('CORRUPT', stats, 'search index stats field seq', nextnum, 'document numbers below 2^32')
end

-- Check every posting the batch changes: a SET (its size read by the
-- same call), a bitmap or none.
local ptype, pcard, pkey = {}, {}, {}
local function check(tok)
  local key = ppre .. tok
  local t, n, err = posting_info(key)
  if not t then return err end
  ptype[tok], pcard[tok], pkey[tok] = t, n, key
end
for tok in pairs(add) do
  local err = check(tok)
  if err then return err end
end
for tok in pairs(rem) do
  if not pkey[tok] then
    local err = check(tok)
    if err then return err end
  end
end
local spec = {}
for name in pairs(zkeys) do
  spec[#spec + 1] = zpre .. name; spec[#spec + 1] = 'zset'; spec[#spec + 1] = 'search score'
end
bad = check_types(spec)
if bad then return bad end
-- The SETs that become bitmaps (a SET's size is its size before the
-- batch, plus what the batch adds, less what it removes): their members
-- are read now, each a document number (SETBIT's offset) or the batch
-- fails here, before its first write.
local most = math.max(threshold, math.floor(nextnum / 256))
local convert = {}
for tok, nums in pairs(add) do
  if ptype[tok] ~= 'string' and pcard[tok] + #nums - (rem[tok] and #rem[tok] or 0) > most then
    local all = {}
    if ptype[tok] == 'set' then
      all = redis.call('SMEMBERS', pkey[tok])
      for _, n in ipairs(all) do
        if not is_docnum(n) then return bad_docnum(pkey[tok], 'search posting', n) end
      end
    end
    convert[tok] = all
  end
end

if CHECK_ONLY then return {0, 0} end

-- Write.
if nextnum > seq then redis.call('HSET', stats, 'seq', nextnum) end
if added > 0 then redis.call('HINCRBY', stats, 'docs', added) end
if lendelta ~= 0 then redis.call('HINCRBY', stats, 'len', lendelta) end
for _, doc in ipairs(docs) do
  local dk = dpre .. doc.num
  if doc.exists then
    redis.call('DEL', dk)
  else
    redis.call('HSET', ids, doc.ext, doc.num)
  end
  redis.call('HSET', dnums, doc.num, doc.ext)
  local h = {'#id', doc.ext, '#n', doc.len}
  for tok, tf in pairs(doc.toks) do h[#h + 1] = tok; h[#h + 1] = tf end
  for _, v in ipairs(doc.fields) do h[#h + 1] = v end
  for i = 1, #h, CHUNK do redis.call('HSET', dk, unpack(h, i, math.min(i + CHUNK - 1, #h))) end
  for _, sc in ipairs(doc.scores) do redis.call('ZADD', zpre .. sc[1], sc[2], doc.num) end
end
for tok, nums in pairs(rem) do
  local key = pkey[tok]
  if ptype[tok] == 'string' then
    local err = set_bits(key, nums, 0)
    if err then return err end
    if redis.call('BITCOUNT', key) == 0 then redis.call('DEL', key) end
  else
    call_chunked('SREM', key, nums)
  end
end
-- Adds; frequent terms' SETs become bitmaps (convert: their members
-- before the batch).
for tok, nums in pairs(add) do
  local key = pkey[tok]
  if ptype[tok] == 'string' then
    local err = set_bits(key, nums, 1)
    if err then return err end
  elseif convert[tok] then
    local gone = {}
    for _, n in ipairs(rem[tok] or {}) do gone[n] = true end
    local all = {}
    local top = 0
    for _, n in ipairs(convert[tok]) do
      if not gone[n] then
        all[#all + 1] = tonumber(n)
        if all[#all] > top then top = all[#all] end
      end
    end
    for _, n in ipairs(nums) do
      all[#all + 1] = tonumber(n)
      if all[#all] > top then top = all[#all] end
    end
    redis.call('DEL', key)
    redis.call('SETBIT', key, top, 1) -- the whole length at once
    local err = set_bits(key, all, 1)
    if err then return err end
  elseif #nums <= CHUNK then
    redis.call('SADD', key, unpack(nums))
  else
    call_chunked('SADD', key, nums)
  end
end
return {added, #docs - added}
