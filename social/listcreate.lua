-- listcreate.lua: create a user list of its owner (create_user_list). A
-- once-script: a re-send answers that the list was created.
-- KEYS[1] owner's user HASH   KEYS[2] owner's lists ZSET
-- KEYS[3], KEYS[4] the list's members and timeline (left by a delete not
-- finished: the name is taken until it is)
-- ARGV[1] list name   ARGV[2] most lists a user may have
-- returns 1 created; the error reply NOUSER, LISTTAKEN or TOOMANYLISTS
-- (nothing written, no record)
local user, lists = KEYS[1], KEYS[2]
local bad = check_types({user, 'hash', 'social user', lists, 'zset', 'social lists',
  KEYS[3], 'zset', 'social list members', KEYS[4], 'zset', 'social list timeline'})
if bad then return bad end
if redis.call('EXISTS', user) == 0 then return redis.error_reply('NOUSER social: no such user') end
if redis.call('ZSCORE', lists, ARGV[1]) then return redis.error_reply('LISTTAKEN social: list exists') end
if redis.call('EXISTS', KEYS[3], KEYS[4]) > 0 then
  return redis.error_reply('LISTTAKEN social: list being deleted')
end
if redis.call('ZCARD', lists) >= tonumber(ARGV[2]) then
  return redis.error_reply('TOOMANYLISTS social: too many lists')
end
local t = redis.call('TIME')
redis.call('ZADD', lists, t[1] * 1000 + math.floor(t[2] / 1000), ARGV[1])
return 1
