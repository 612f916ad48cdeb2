-- post.lua: create a status and put it on its author's profile timeline
-- (create_status + post_status), and return the first followers to feed.
-- A once-script: a re-send of the same call answers the same status.
-- KEYS[1] author's user HASH   KEYS[2] author's profile ZSET
-- KEYS[3] author's followers ZSET
-- KEYS[4] author's status HASH prefix: the status is KEYS[4]..seq (minted
--         here; it shares the hash tag of KEYS[1])
-- KEYS[5] author's listed ZSET (the user lists holding the author, as
--         "<owner>/<list>", scored by the same sequence as followers)
-- ARGV[1] author's user ID   ARGV[2] message   ARGV[3] timeline cap
-- ARGV[4] N, the followers fed before Post returns
-- ARGV[5], ARGV[6] latitude and longitude, or '' and '' for none
-- ARGV[7] targets per feed call, or 0 (see the reply)
-- returns the error reply NOUSER (nothing written) if there is no such
-- user, else {1, id, posted ms, more (0/1), last follower's score (0 if
-- none), author's login, 'm', follower or list, its sequence number, ...}
-- (the first N of followers and lists together, by sequence number), or,
-- when ARGV[7] > 0 (one server: feed.lua reads the targets itself) and no
-- list holds the author, {..., author's login, 'e', the sequence number of
-- every ARGV[7]-th follower of the first N and of the last}, found by rank
-- without reading the batch
local user, profile, followers, listed = KEYS[1], KEYS[2], KEYS[3], KEYS[5]
local uid, msg = ARGV[1], ARGV[2]
local cap, n = tonumber(ARGV[3]), tonumber(ARGV[4])
local bad = check_types({user, 'hash', 'social user', profile, 'zset', 'social profile timeline',
  followers, 'zset', 'social followers', listed, 'zset', 'social listed'})
if bad then return bad end
if redis.call('EXISTS', user) == 0 then return redis.error_reply('NOUSER social: no such user') end
bad = check_hint(user, 'seq', 'social user') or check_hint(user, 'posts', 'social user')
if bad then return bad end
-- The last status number is 0 to 2^53 - 1, so that the next is exact; it
-- is formatted with %d: Lua would write 10^14 and past as '1e+14'.
local last = redis.call('HGET', user, 'seq') or '0'
if string.sub(last, 1, 1) == '-' or last == '9007199254740992' then
  return key_error('CORRUPT', user, 'social user field seq', string.format('%q', last), 'an integer from 0 to 2^53-1')
end
local seq = tonumber(last) + 1
local num = string.format('%d', seq)
local id = uid .. ':' .. num
local status = KEYS[4] .. num
bad = check_types({status, 'hash', 'social status'})
if bad then return bad end
if redis.call('EXISTS', status) == 1 then
  return key_error('CORRUPT', user, 'social user field seq', last, 'at least every status number in use')
end
local t = redis.call('TIME')
local ms = t[1] * 1000 + math.floor(t[2] / 1000)
-- An author's scores strictly increase (several posts in one millisecond,
-- a server clock stepped back): a tie orders by ID text, 'ann:10' before
-- 'ann:9', and the cap would trim the newest status.
local top = redis.call('ZRANGE', profile, -1, -1, 'WITHSCORES')
if top[2] then
  local prev = to_number(top[2])
  if prev and prev >= ms then ms = prev + 1 end
end
local login = redis.call('HGET', user, 'login') or uid
redis.call('HSET', status, 'id', id, 'uid', uid, 'login', login, 'message', msg, 'posted', ms)
if ARGV[5] ~= '' then redis.call('HSET', status, 'lat', ARGV[5], 'lon', ARGV[6]) end
redis.call('HSET', user, 'seq', num)
redis.call('HINCRBY', user, 'posts', 1)
redis.call('ZADD', profile, ms, id)
redis.call('ZREMRANGEBYRANK', profile, 0, -cap - 1)
local step = tonumber(ARGV[7])
if step > 0 and redis.call('ZCARD', listed) == 0 then
  -- One server, no lists: the first batch's call ranges, found by rank.
  local card = redis.call('ZCARD', followers)
  local m = math.min(card, n)
  local out = rank_ends(followers, 0, m, step, {1, id, ms, card > n and 1 or 0, 0, login, 'e'})
  if m > 0 then out[5] = out[#out] end
  return out
end
local fl = redis.call('ZRANGEBYSCORE', followers, '-inf', '+inf', 'WITHSCORES', 'LIMIT', 0, n + 1)
local ll = redis.call('ZRANGEBYSCORE', listed, '-inf', '+inf', 'WITHSCORES', 'LIMIT', 0, n + 1)
if #ll > 0 then -- merge the two by score, keep the first n + 1
  local m, i, j = {}, 1, 1
  while #m < 2 * (n + 1) and (i <= #fl or j <= #ll) do
    if j > #ll or (i <= #fl and tonumber(fl[i + 1]) < tonumber(ll[j + 1])) then
      m[#m + 1], m[#m + 2] = fl[i], fl[i + 1]
      i = i + 2
    else
      m[#m + 1], m[#m + 2] = ll[j], ll[j + 1]
      j = j + 2
    end
  end
  fl = m
end
local more = 0
if #fl > 2 * n then
  more = 1
  fl[#fl] = nil
  fl[#fl] = nil
end
local out = {1, id, ms, more, 0, login, 'm'}
for i = 1, #fl, 2 do
  out[#out + 1] = fl[i]
  out[#out + 1] = tonumber(fl[i + 1])
end
if #fl > 0 then out[5] = tonumber(fl[#fl]) end
return out
