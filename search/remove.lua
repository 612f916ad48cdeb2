-- remove.lua: remove documents of one shard, leaving no posting, stored
-- field or score of theirs behind. Run as a once-script: a re-send after
-- a lost reply gets the first run's answer.
-- KEYS[1] ids     HASH document ID -> number
-- KEYS[2] stats   HASH seq, docs, len
-- KEYS[3] document HASH prefix    KEYS[4] posting prefix (SET or bitmap)
-- KEYS[5] score ZSET prefix       KEYS[6] nums HASH document number -> ID
-- ARGV[1] n IDs, then the IDs, then k score names, then the names
-- returns the number of documents removed (IDs not indexed are skipped)
-- Every key is checked before the first write. CHECK_ONLY (set by the Go
-- source before this one): run the checks only, write nothing, return 0
-- (the check pass of a sharded Remove).
local ids, stats, dpre, ppre, zpre, dnums = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local bad = check_types({ids, 'hash', 'search document IDs', stats, 'hash', 'search index stats',
  dnums, 'hash', 'search document numbers'})
  or check_len(stats, 'docs', 'search index stats') or check_len(stats, 'len', 'search index stats')
if bad then return bad end

local n = tonumber(ARGV[1])
local a = 2
local victims = {}
local ptype = {} -- token -> type of its posting
for i = 1, n do
  local ext = ARGV[a]; a = a + 1
  local num = redis.call('HGET', ids, ext)
  if num then
    if not is_docnum(num) then return bad_docnum(ids, 'search document IDs', num) end
    local dk = dpre .. num
    local h = redis.pcall('HGETALL', dk)
    if h.err then return key_error('WRONGTYPE', dk, 'search document', 'a ' .. redis.call('TYPE', dk).ok, 'a hash') end
    local fields = {}
    for j = 1, #h, 2 do fields[h[j]] = h[j + 1] end
    if fields['#id'] ~= ext or not is_len(fields['#n'] or '') then
      return key_error('CORRUPT', dk, 'search document', string.format('%q', string.sub(fields['#id'] or 'missing', 1, 40)),
        'the document ' .. string.format('%q', ext) .. ' with its length')
    end
    local toks = {}
    for f in pairs(fields) do
      local p = string.sub(f, 1, 2)
      if p == 't:' then
        toks[#toks + 1] = f
        if not ptype[f] then
          local t, err = posting_type(ppre .. f)
          if not t then return err end
          ptype[f] = t
        end
      end
    end
    victims[#victims + 1] = {ext = ext, num = num, dk = dk, len = tonumber(fields['#n']), toks = toks}
  end
end
local zk = {}
local spec = {}
for i = 1, tonumber(ARGV[a]) do
  local k = zpre .. ARGV[a + i]
  zk[#zk + 1] = k
  spec[#spec + 1] = k; spec[#spec + 1] = 'zset'; spec[#spec + 1] = 'search score'
end
bad = check_types(spec)
if bad then return bad end

if CHECK_ONLY then return 0 end

-- Write.
local lendelta = 0
for _, v in ipairs(victims) do
  for _, tok in ipairs(v.toks) do
    if ptype[tok] == 'string' then
      redis.call('SETBIT', ppre .. tok, v.num, 0)
    else
      redis.call('SREM', ppre .. tok, v.num)
    end
  end
  for _, k in ipairs(zk) do redis.call('ZREM', k, v.num) end
  redis.call('DEL', v.dk)
  redis.call('HDEL', ids, v.ext)
  redis.call('HDEL', dnums, v.num)
  lendelta = lendelta + v.len
end
for tok, t in pairs(ptype) do
  if t == 'string' and redis.call('BITCOUNT', ppre .. tok) == 0 then redis.call('DEL', ppre .. tok) end
end
if #victims > 0 then
  redis.call('HINCRBY', stats, 'docs', -#victims)
  redis.call('HINCRBY', stats, 'len', -lendelta)
end
return #victims
