-- create.lua: create a user whose ID (its login in lower case) is free. A
-- once-script: a re-send of the same call is answered from the record of
-- its first reply, so a created user is never reported as taken.
-- KEYS[1] user HASH
-- ARGV[1] login as given   ARGV[2] display name
-- returns 1 created; the error reply TAKEN (nothing written, no record) if
-- the ID is taken
local user = KEYS[1]
local bad = check_types({user, 'hash', 'social user'})
if bad then return bad end
if redis.call('EXISTS', user) == 1 then return redis.error_reply('TAKEN social: login taken') end
local t = redis.call('TIME')
redis.call('HSET', user, 'login', ARGV[1], 'name', ARGV[2], 'followers', 0, 'following', 0,
  'posts', 0, 'seq', 0, 'fseq', 0, 'signup', t[1] * 1000 + math.floor(t[2] / 1000))
return 1
