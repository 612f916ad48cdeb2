-- logout.lua: end one session (a logout): delete its login entry, its
-- recent entry, its viewed items and its cart in one atomic step, as
-- clean.lua does for each session it ends (the functions of endsession.lua,
-- prepended). A once-script: a re-send is answered from the record of its
-- first reply, so a session that existed is not reported gone by the
-- re-send that finds it deleted.
-- KEYS[1] login   HASH token -> user
-- KEYS[2] recent  ZSET token -> last seen
-- KEYS[3] viewed  ZSET of the session: item -> view time
-- KEYS[4] cart    HASH of the session: item -> count
-- ARGV[1] token
-- returns 1 when the session existed (a login entry or a recent entry),
-- else 0
-- Every key is checked before the first write.
local login, recent, token = KEYS[1], KEYS[2], ARGV[1]
local bad = check_types(session_spec({login, 'hash', 'session logins', recent, 'zset', 'session recent'},
  KEYS[3], KEYS[4], false))
if bad then return bad end

local existed = end_session(login, KEYS[3], KEYS[4], token, false) + redis.call('ZREM', recent, token)
if existed > 0 then return 1 end
return 0
