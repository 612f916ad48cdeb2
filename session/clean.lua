-- clean.lua: delete the oldest sessions beyond the limit, at most a batch
-- of them, each with its login entry, recent entry, viewed items and cart,
-- in one atomic step (the book's clean_full_sessions, one batch). A
-- once-script: a re-send is answered from the record of its first reply,
-- so the count it answers is what it deleted. (Run again, it would delete
-- only sessions still beyond the limit: never below it.)
-- KEYS[1] recent  ZSET token -> last seen
-- KEYS[2] login   HASH token -> user
-- KEYS[3] viewed key prefix: a session's viewed ZSET is KEYS[3]..token
-- KEYS[4] cart key prefix: a session's cart HASH is KEYS[4]..token
--         The tokens are read here, so those keys cannot be listed in
--         KEYS; they share the hash tag of KEYS[1], hence its Cluster slot.
-- ARGV[1] limit (>= 1)   ARGV[2] batch (>= 1)   ARGV[3] '1': keep the carts
--         (the book's clean_sessions), '0': delete them
-- returns {deleted, more}: more is 1 when sessions beyond the limit remain
-- Every key is checked, the candidates' included, before the first write.
-- Each candidate is checked and deleted by the functions of endsession.lua
-- (prepended), which logout.lua shares.
local recent, login = KEYS[1], KEYS[2]
local bad = check_types({recent, 'zset', 'session recent', login, 'hash', 'session logins'})
if bad then return bad end
local excess = redis.call('ZCARD', recent) - tonumber(ARGV[1])
if excess <= 0 then return {0, 0} end
local n = math.min(excess, tonumber(ARGV[2]))
local tokens = redis.call('ZRANGE', recent, 0, n - 1)
local keep = ARGV[3] == '1'
local spec = {}
for _, token in ipairs(tokens) do
  session_spec(spec, KEYS[3] .. token, KEYS[4] .. token, keep)
end
bad = check_types(spec)
if bad then return bad end

for _, token in ipairs(tokens) do
  end_session(login, KEYS[3] .. token, KEYS[4] .. token, token, keep)
end
redis.call('ZREMRANGEBYRANK', recent, 0, #tokens - 1)
local more = 0
if excess > #tokens then more = 1 end
return {#tokens, more}
