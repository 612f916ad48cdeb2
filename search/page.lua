-- page.lua: read a page of a cached search result of one shard and set its
-- TTL again (book 7.1.2: a search id kept 30 s for later pages). When the
-- page goes past the entries search.lua ordered and the rest is still
-- numbers (<sid>:s or <sid>:b), order the rest first (once) and append it
-- to the LIST; in index order, append only as far as the page needs.
-- KEYS[1] <sid>:c LIST: total, sort spec, then ID and sort key per entry (search.lua)
-- KEYS[2] <sid>:s result's document numbers STRING "n,n,..." (until ordered)
-- KEYS[3] <sid>:b result's document numbers as a bitmap (instead of <sid>:s)
-- KEYS[4] document HASH prefix   KEYS[5] score ZSET prefix   KEYS[6] HASH document number -> ID
-- ARGV[1] TTL ms   ARGV[2] offset   ARGV[3] count (0: only refresh)
-- returns {-1} when the result has expired, else {total, {id, key, ...}}
local lkey, skey, bkey, dpre, zpre, dnums = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local bad = check_types({lkey, 'list', 'search cached result', skey, 'string', 'search cached result',
  bkey, 'string', 'search cached result'})
if bad then return bad end
local head = redis.call('LRANGE', lkey, 0, 1)
if #head == 0 then return {-1} end
local total = head[1]
if not is_len(total) or #head < 2 then
  return key_error('CORRUPT', lkey, 'search cached result', string.format('%q', string.sub(total, 1, 40)), 'a count')
end
local ttl, offset, count = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local have = math.floor((redis.call('LLEN', lkey) - 2) / 2)
local q, s
if count > 0 and offset + count > have and redis.call('EXISTS', skey, bkey) > 0 then
  q = dec_spec(head[2])
  s = q and parse_spec(q, zpre)
  if not s then
    return key_error('CORRUPT', lkey, 'search cached result', string.format('%q', string.sub(head[2], 1, 40)), 'a sort spec')
  end
end
if q and q[1] == 'doc' then
  -- Index order: the entries are the result's numbers ascending, so the
  -- next ones come from the numbers above the last entry's, as far as the
  -- page needs (a document removed since the search is left out); the
  -- numbers stay for later pages.
  bad = check_types({dnums, 'hash', 'search document numbers'})
  if bad then return bad end
  local last = -1
  if have > 0 then last = tonumber(redis.call('LINDEX', lkey, -1)) or -1 end
  local str, sorted, pos = redis.call('GET', skey), nil, 1
  if str then
    sorted = {}
    for n in string.gmatch(str, '[^,]+') do
      local v = tonumber(n)
      if v and v > last then sorted[#sorted + 1] = v end
    end
    table.sort(sorted)
  end
  while have < offset + count do
    local batch
    if sorted then
      batch = {}
      for i = pos, math.min(pos + offset + count - have - 1, #sorted) do batch[#batch + 1] = sorted[i] end
      pos = pos + #batch
    else
      batch = first_bits(bkey, offset + count - have, last)
    end
    if #batch == 0 then break end
    last = batch[#batch]
    local ids, ks, ns = fetch_entries(batch, s, dpre, dnums, false)
    if not ids then return ks end
    local order = {}
    for i = 1, #ids do order[i] = i end
    call_chunked('RPUSH', lkey, entry_items({}, s, ids, ks, ns, order, 1))
    have = have + #ids
  end
elseif q then
  -- Order the rest: the result's documents not among the first entries, by
  -- their sort keys now; a document removed since the search is left out.
  local spec = {dnums, 'hash', 'search document numbers'}
  for _, w in ipairs(s.weights) do
    spec[#spec + 1] = w[1]; spec[#spec + 1] = 'zset'; spec[#spec + 1] = 'search score'
  end
  bad = check_types(spec)
  if bad then return bad end
  local nums = {}
  local str = redis.call('GET', skey)
  if str then
    for n in string.gmatch(str, '[^,]+') do nums[#nums + 1] = n end
  else
    nums = all_bits(bkey)
  end
  local ids, ks, ns = fetch_entries(nums, s, dpre, dnums, false)
  if not ids then return ks end
  local seen, cached = {}, redis.call('LRANGE', lkey, 2, -1)
  for i = 1, #cached, 2 do seen[cached[i]] = true end
  local rest = {}
  for j = 1, #ids do
    if not seen[ids[j]] then rest[#rest + 1] = j end
  end
  table.sort(rest, make_less(s, ids, ks, ns))
  call_chunked('RPUSH', lkey, entry_items({}, s, ids, ks, ns, rest, 1))
  redis.call('DEL', skey, bkey)
end
redis.call('PEXPIRE', lkey, ttl)
redis.call('PEXPIRE', skey, ttl)
redis.call('PEXPIRE', bkey, ttl)
local out = {}
if count > 0 then
  out = redis.call('LRANGE', lkey, 2 + 2 * offset, 1 + 2 * (offset + count))
end
return {tonumber(total), out}
