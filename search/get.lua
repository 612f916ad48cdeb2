-- get.lua: what the index holds for one document of the shard (read-only).
-- KEYS[1] ids HASH document ID -> number   KEYS[2] document HASH prefix
-- KEYS[3..] the declared score ZSETs (document number -> score)
-- ARGV[1] document ID, ARGV[2..] the hash fields of the declared sort
--         fields ('s:<field>')
-- returns false when the ID is not indexed, else {terms ('#n'), {the sort
-- fields' values, false where missing}, {the scores, false where missing}}
-- Every key is checked before it is read; a malformed document number or
-- document hash is CORRUPT.
local ids, dpre, ext = KEYS[1], KEYS[2], ARGV[1]
local spec = {ids, 'hash', 'search document IDs'}
for i = 3, #KEYS do
  spec[#spec + 1] = KEYS[i]; spec[#spec + 1] = 'zset'; spec[#spec + 1] = 'search score'
end
local bad = check_types(spec)
if bad then return bad end

local num = redis.call('HGET', ids, ext)
if not num then return false end
if not is_docnum(num) then return bad_docnum(ids, 'search document IDs', num) end
local dk = dpre .. num
bad = check_types({dk, 'hash', 'search document'})
if bad then return bad end
local v = redis.call('HMGET', dk, '#id', '#n', unpack(ARGV, 2))
if v[1] ~= ext or not is_len(v[2] or '') then
  return key_error('CORRUPT', dk, 'search document', string.format('%q', string.sub(v[1] or 'missing', 1, 40)),
    'the document ' .. string.format('%q', ext) .. ' with its length')
end
local fields = {}
for i = 3, #v do fields[i - 2] = v[i] end
local scores = {}
for i = 3, #KEYS do scores[i - 2] = redis.call('ZSCORE', KEYS[i], num) end
return {tonumber(v[2]), fields, scores}
