-- common.lua: helpers of the search scripts, prepended to each (after
-- check.lua, whose key_error they use).
--
-- Postings: a token ('t:<term>') has a posting at
-- <posting prefix><token>: a SET of document numbers, or, once a term is
-- frequent (add.lua), a bitmap: a STRING whose bit n is set for document
-- n (bit 0 is the high bit of the first byte, as SETBIT counts).

local CHUNK = 1000 -- values per command (Lua's unpack has a limit)

-- is_docnum: v is a document number as the scripts write one and as
-- SETBIT and BITFIELD read an offset: canonical decimal digits (no sign,
-- space, exponent or leading zero), below 2^32. Lua's tonumber takes
-- more (' 7', '1e3', '0x10', 'nan'), and a loose number set the wrong bit
-- or was refused by SETBIT after the script's first write.
local function is_docnum(v)
  if v == '0' then return true end
  if not string.match(v, '^[1-9]%d*$') then return false end
  return #v < 10 or #v == 10 and v <= '4294967295'
end

-- is_len: v is a count that is never negative (a document's length, the
-- stats' docs, len and seq): is_count (check.lua) without a '-'.
local function is_len(v)
  return is_count(v) and string.sub(v, 1, 1) ~= '-'
end

-- check_len: like check_hint, field of the hash key is missing or holds
-- a count that is never negative.
local function check_len(key, field, role)
  local v = redis.call('HGET', key, field)
  if v and not is_len(v) then
    return key_error('CORRUPT', key, role .. ' field ' .. field, string.format('%q', string.sub(v, 1, 40)),
      'a non-negative integer within 2^53')
  end
end

-- bad_docnum: the CORRUPT error of a document number v read from key.
local function bad_docnum(key, role, v)
  return key_error('CORRUPT', key, role, string.format('%q', string.sub(v, 1, 40)), 'a document number below 2^32')
end

-- posting_type: 'none', 'set' or 'string' (a bitmap), or nil and an error
-- reply when key holds another type.
local function posting_type(key)
  local t = redis.call('TYPE', key).ok
  if t ~= 'none' and t ~= 'set' and t ~= 'string' then
    return nil, key_error('WRONGTYPE', key, 'search posting', 'a ' .. t, 'a set or a bitmap')
  end
  return t
end

-- posting_info: the type of the posting key and, for a SET, its size,
-- in one call when it is a SET (the common case of an index batch); or
-- nil and an error reply when key holds another type.
local function posting_info(key)
  local n = redis.pcall('SCARD', key)
  if type(n) == 'number' then
    if n == 0 then return 'none', 0 end
    return 'set', n
  end
  local t, err = posting_type(key)
  return t, 0, err
end

-- set_bits sets the bits nums of the bitmap key to v (1 or 0): BITFIELD,
-- 250 bits a call, where the server has it, else SETBIT per bit.
local has_bitfield = true
local function set_bits(key, nums, v)
  if has_bitfield then
    for i = 1, #nums, 250 do
      local args = {}
      for j = i, math.min(i + 249, #nums) do
        args[#args + 1] = 'SET'; args[#args + 1] = 'u1'; args[#args + 1] = nums[j]; args[#args + 1] = v
      end
      local r = redis.pcall('BITFIELD', key, unpack(args))
      if r.err then
        if i > 1 or not string.find(r.err, 'nknown', 1, true) then return redis.error_reply(r.err) end
        has_bitfield = false
        break
      end
    end
    if has_bitfield then return end
  end
  for _, n in ipairs(nums) do redis.call('SETBIT', key, n, v) end
end

-- posting_card: the documents of a posting of type t.
local function posting_card(key, t)
  if t == 'set' then return redis.call('SCARD', key) end
  if t == 'string' then return redis.call('BITCOUNT', key) end
  return 0
end

local P2 = {128, 64, 32, 16, 8, 4, 2, 1}

-- bits_of appends to out the numbers above above (nil: all) of the bits
-- set in s, whose first byte is byte base of its bitmap, ascending; it
-- stops when out holds limit numbers (limit nil: never). string.find
-- skips the zero bytes.
local function bits_of(s, base, out, limit, above)
  above = above or -1
  local n = #out
  local i = string.find(s, '[^%z]')
  while i do
    local v = string.byte(s, i)
    local at = (base + i - 1) * 8
    for b = 1, 8 do
      if v >= P2[b] then
        v = v - P2[b]
        if at + b - 1 > above then
          n = n + 1
          out[n] = at + b - 1
          if n == limit then return end
        end
      end
    end
    i = string.find(s, '[^%z]', i + 1)
  end
end

-- first_bits returns the first k numbers of the bitmap key above above
-- (nil: from the start), ascending: BITPOS skips the empty bytes,
-- GETRANGE reads from the next set bit, 64 bytes and twice as many each
-- time after, up to 1,024 (a read copies the bytes several times on their
-- way into Lua: about 1 µs per 1,000 bytes).
local function first_bits(key, k, above)
  local out, from, size = {}, math.floor(((above or -1) + 1) / 8), 64
  while #out < k do
    local p = redis.call('BITPOS', key, 1, from)
    if p < 0 then break end
    local b = math.floor(p / 8)
    local s = redis.call('GETRANGE', key, b, b + size - 1)
    if s == '' then break end
    bits_of(s, b, out, k, above)
    from = b + #s
    if size < 1024 then size = size * 2 end
  end
  return out
end

-- all_bits returns every number of the bitmap key, ascending.
local function all_bits(key)
  local out = {}
  bits_of(redis.call('GET', key) or '', 0, out)
  return out
end

-- call_chunked runs redis.call(cmd, key, <head...>, <chunk of items>) over
-- items in chunks; returns the sum of integer replies.
local function call_chunked(cmd, key, items)
  local sum = 0
  for i = 1, #items, CHUNK do
    local r = redis.call(cmd, key, unpack(items, i, math.min(i + CHUNK - 1, #items)))
    if type(r) == 'number' then sum = sum + r end
  end
  return sum
end

-- fmt_score formats a score with every digit (Lua's tostring keeps 14).
local function fmt_score(x)
  return string.format('%.17g', x)
end

-- Search results (search.lua, page.lua).
--
-- A sort spec is a flat list, kept with a search's cached result for its
-- later pages: mode ('id', 'num', 'text', 'z', 'rel'), field, desc ('1'),
-- w, w x (score name, weight), then for 'rel': r, r tokens, N, total
-- length, r document frequencies (the statistics the search used). Mode
-- 'doc' is by document number: the order documents were first indexed.

-- BYTE_ORDER and bless come from internal/script (BytesLua), prepended.

-- parse_spec reads a sort spec; weights name ZSETs under zpre. It returns
-- nil for a spec that is not one search.lua writes (a corrupt cache).
local MODES = {doc = true, id = true, num = true, text = true, z = true, rel = true}
local function parse_spec(q, zpre)
  local s = {mode = q[1], field = q[2], desc = q[3] == '1', weights = {}, rel = {}, avglen = 0}
  local k = tonumber(q[4])
  if not MODES[s.mode] or not s.field or not k or k < 0 or k % 1 ~= 0 then return nil end
  local a = 5
  for _ = 1, k do
    local w = to_number(q[a + 1]) -- Go writes 1e-05
    if not q[a] or not w then return nil end
    s.weights[#s.weights + 1] = {zpre .. q[a], w}
    a = a + 2
  end
  if s.mode == 'rel' then
    local r = tonumber(q[a]); a = a + 1
    if not r or r < 0 or r % 1 ~= 0 then return nil end
    for i = 0, r - 1 do
      if not q[a + i] then return nil end
      s.rel[#s.rel + 1] = {tok = q[a + i]}
    end
    a = a + r
    local N, total = to_number(q[a]), to_number(q[a + 1])
    if not N or not total then return nil end
    for i, t in ipairs(s.rel) do
      t.df = to_number(q[a + 1 + i])
      if not t.df then return nil end
      t.idf = math.log(1 + (N - t.df + 0.5) / (t.df + 0.5))
    end
    if N > 0 then s.avglen = total / N end
  end
  s.numeric = s.mode == 'num' or s.mode == 'z' or s.mode == 'rel' or s.mode == 'doc'
  return s
end

-- fetch_entries reads the ID and sort key of the documents docnums. By ID,
-- number or scores: the IDs from the HASH dnums (number -> ID), one HMGET per
-- CHUNK documents (a document missing there is read from its own hash),
-- and one ZMSCORE per weight and CHUNK (ZSCORE per document without it).
-- By a field or BM25: one HMGET per document of its hash. (Measured on
-- Redis 7.0: 0.5 µs a document for the HMGET of dnums, 1.2-1.8 µs for an
-- HGET per document, about as much for a SORT ... GET, which Redis 7.0
-- Cluster refuses anyway.) Returns parallel arrays ids, keys (a text field's
-- values, IDs by ID, numbers in index order; nil by a numeric field, 'z'
-- and 'rel') and ns (numeric keys: never NaN), or nil and
-- an error reply. A number without its document is corrupt when strict
-- (search.lua: the postings and documents change together), else left
-- out (page.lua: removed since the search).
local function fetch_entries(docnums, s, dpre, dnums, strict)
  local mode = s.mode
  local fields = {'#id'}
  if mode == 'num' or mode == 'text' then
    fields[2] = 's:' .. s.field
  elseif mode == 'rel' then
    fields[2] = '#n'
    for _, t in ipairs(s.rel) do fields[#fields + 1] = t.tok end
  end
  local bulk
  if mode == 'id' or mode == 'z' or mode == 'doc' then
    bulk = {}
    for i = 1, #docnums, CHUNK do
      local v = redis.call('HMGET', dnums, unpack(docnums, i, math.min(i + CHUNK - 1, #docnums)))
      if i == 1 then
        bulk = v
      else
        for q = 1, #v do bulk[i + q - 1] = v[q] end
      end
    end
  end
  if mode == 'id' then
    local whole = true
    for i = 1, #docnums do
      if not bulk[i] then whole = false; break end
    end
    if whole then return bulk, bulk, {} end
  end
  local nums, ids, keys, ns = {}, {}, {}, {}
  local rel, avglen = s.rel, s.avglen
  local j = 0
  for i, num in ipairs(docnums) do
    local dk, id, v
    if bulk then
      id = bulk[i]
      if not id then
        dk = dpre .. num
        id = redis.pcall('HGET', dk, '#id')
        if type(id) == 'table' then id = false end
      end
    else
      dk = dpre .. num
      v = redis.pcall('HMGET', dk, unpack(fields))
      if v.err then v = {} end
      id = v[1]
    end
    if not id then
      local t = redis.call('TYPE', dk).ok
      if t ~= 'none' and t ~= 'hash' then
        return nil, key_error('WRONGTYPE', dk, 'search document', 'a ' .. t, 'a hash')
      elseif strict or t == 'hash' then
        return nil, key_error('CORRUPT', dk, 'search document', 'no #id', 'the document of a posting')
      end
    else
      j = j + 1
      nums[j], ids[j] = num, id
      if mode == 'num' then
        ns[j] = to_number(v[2] or '0') or 0 -- Go writes 2e+09
      elseif mode == 'text' then
        keys[j] = v[2] or ''
      elseif mode == 'rel' then
        local len = tonumber(v[2] or '0') or 0
        local sc = 0
        for q, t in ipairs(rel) do
          local tf = tonumber(v[2 + q] or '0') or 0
          if tf > 0 then
            local norm = 1.2 * (0.25 + 0.75 * (avglen > 0 and len / avglen or 1))
            sc = sc + t.idf * tf * 2.2 / (tf + norm)
          end
        end
        ns[j] = sc
      elseif mode == 'z' then
        ns[j] = 0
      elseif mode == 'doc' then
        keys[j], ns[j] = tostring(num), tonumber(num)
      end
    end
  end
  if mode == 'z' then
    for _, w in ipairs(s.weights) do
      for i = 1, j, CHUNK do
        local last = math.min(i + CHUNK - 1, j)
        local z = redis.pcall('ZMSCORE', w[1], unpack(nums, i, last))
        if type(z) == 'table' and z.err then
          if not string.find(z.err, 'nknown command', 1, true) then return nil, redis.error_reply(z.err) end
          z = {}
          for q = i, last do z[q - i + 1] = redis.call('ZSCORE', w[1], nums[q]) end
        end
        for q = i, last do
          local v = z[q - i + 1]
          if v then ns[q] = ns[q] + to_number(v) * w[2] end -- miniredis replies 2e+9
        end
      end
    end
  end
  if s.numeric then
    -- A sum that is no number (inf - inf: scores near the float64 limit
    -- under weights of both signs), or a field someone wrote as 'nan',
    -- counts as 0: NaN is neither below, above nor equal to anything, and
    -- would leave the order undefined (and differ from the shards' merge).
    for q = 1, j do
      if ns[q] ~= ns[q] then ns[q] = 0 end
    end
  end
  if mode == 'id' then keys = ids end
  return ids, keys, ns
end

-- entry_key: the sort key an entry is answered and cached with: the
-- number the script ordered it by, for a numeric field too (so that the
-- shards' merge in Go orders by the same numbers).
local function entry_key(s, keys, ns, j)
  if s.mode == 'z' or s.mode == 'rel' or s.mode == 'num' then return fmt_score(ns[j]) end
  return keys[j]
end

-- make_less returns the order of entries (indexes into ids, keys, ns): by
-- key (numbers numerically, strings by bytes), descending when s.desc,
-- then by ID.
local function make_less(s, ids, keys, ns)
  local desc = s.desc
  if s.numeric then
    if BYTE_ORDER then
      return function(a, b)
        local x, y = ns[a], ns[b]
        if x ~= y then
          if desc then return x > y end
          return x < y
        end
        return ids[a] < ids[b]
      end
    end
    return function(a, b)
      local x, y = ns[a], ns[b]
      if x ~= y then
        if desc then return x > y end
        return x < y
      end
      return bless(ids[a], ids[b])
    end
  end
  if BYTE_ORDER then
    return function(a, b)
      local x, y = keys[a], keys[b]
      if x ~= y then
        if desc then return y < x end
        return x < y
      end
      return ids[a] < ids[b]
    end
  end
  return function(a, b)
    local x, y = keys[a], keys[b]
    if x ~= y then
      if desc then return bless(y, x) end
      return bless(x, y)
    end
    return bless(ids[a], ids[b])
  end
end

-- top_k returns the first k of the entries 1..n in order (all of them
-- when k >= n): a bounded max-heap of k, then a sort of those k only.
-- With skeys (distinct strings ordered ascending by Lua's <, which is
-- then byte order), most entries are turned away by one < on skeys
-- rather than a call of less.
local function top_k(n, k, less, skeys)
  local h = {}
  if k >= n then
    for i = 1, n do h[i] = i end
    table.sort(h, less)
    return h
  end
  for i = 1, k do
    h[i] = i
    local c = i
    while c > 1 do
      local p = math.floor(c / 2)
      if less(h[p], h[c]) then h[p], h[c] = h[c], h[p]; c = p else break end
    end
  end
  local worst = skeys and skeys[h[1]]
  for i = k + 1, n do
    if (skeys and skeys[i] < worst) or (not skeys and less(i, h[1])) then
      h[1] = i
      local c = 1
      while true do
        local l = 2 * c
        if l > k then break end
        local m = l
        if l < k and less(h[l], h[l + 1]) then m = l + 1 end
        if less(h[c], h[m]) then h[c], h[m] = h[m], h[c]; c = m else break end
      end
      if skeys then worst = skeys[h[1]] end
    end
  end
  table.sort(h, less)
  return h
end

-- smallest returns the k smallest of the numbers v, ascending (all of
-- them when k >= #v): a bounded max-heap of k compared inline, then a
-- sort of those k.
local function smallest(v, k)
  local h, n = {}, #v
  if k >= n then
    for i = 1, n do h[i] = v[i] end
    table.sort(h)
    return h
  end
  for i = 1, k do
    local x, c = v[i], i
    while c > 1 do
      local p = math.floor(c / 2)
      if h[p] >= x then break end
      h[c] = h[p]
      c = p
    end
    h[c] = x
  end
  for i = k + 1, n do
    local x = v[i]
    if x < h[1] then
      local c = 1
      while true do
        local l = c + c
        if l > k then break end
        if l < k and h[l + 1] > h[l] then l = l + 1 end
        if h[l] <= x then break end
        h[c] = h[l]
        c = l
      end
      h[c] = x
    end
  end
  table.sort(h)
  return h
end

-- entry_items appends to items the entries order[from..]: ID, sort key,
-- ID, sort key, ... (a cached result's LIST after its head).
local function entry_items(items, s, ids, keys, ns, order, from)
  for i = from, #order do
    local j = order[i]
    items[#items + 1] = ids[j]; items[#items + 1] = entry_key(s, keys, ns, j)
  end
  return items
end

-- enc_spec encodes a sort spec as one string (each item's byte length,
-- ':', the item); dec_spec decodes it, nil when s is not such a string.
local function enc_spec(q)
  local out = {}
  for i, v in ipairs(q) do
    v = tostring(v)
    out[i] = #v .. ':' .. v
  end
  return table.concat(out)
end

local function dec_spec(s)
  local q, pos = {}, 1
  while pos <= #s do
    local c = string.find(s, ':', pos, true)
    local len = c and string.sub(s, pos, c - 1)
    if not len or not string.match(len, '^%d+$') then return nil end
    local n = tonumber(len)
    q[#q + 1] = string.sub(s, c + 1, c + n)
    pos = c + n + 1
  end
  if pos ~= #s + 1 then return nil end
  return q
end
