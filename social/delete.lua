-- delete.lua: delete a status of its author (delete_status): its hash,
-- its entries in the author's profile and home timelines, one post off the
-- count. Followers' timelines are cleaned later (clean.lua). A once-script:
-- a re-send answers that the status was deleted.
-- KEYS[1] author's user HASH   KEYS[2] status HASH   KEYS[3] profile ZSET
-- KEYS[4] home ZSET   KEYS[5] followers ZSET   KEYS[6] listed ZSET
-- ARGV[1] author's user ID   ARGV[2] status ID
-- ARGV[3] status cache invalidation channel ('' or absent: publish nothing)
-- ARGV[4] its message (origin + status ID)
-- returns the error reply NOSTATUS (nothing written) if there is no such
-- status of this author, else {1, followers + lists, login, message, posted ms,
-- lat, lon} (the deleted status, for the stream; '' where absent)
local user, status, profile, home = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local bad = check_types({user, 'hash', 'social user', status, 'hash', 'social status',
  profile, 'zset', 'social profile timeline', home, 'zset', 'social home timeline',
  KEYS[5], 'zset', 'social followers', KEYS[6], 'zset', 'social listed'})
if bad then return bad end
bad = check_hint(user, 'posts', 'social user')
if bad then return bad end
if redis.call('HGET', status, 'uid') ~= ARGV[1] then return redis.error_reply('NOSTATUS social: no such status') end
local f = redis.call('HMGET', status, 'login', 'message', 'posted', 'lat', 'lon')
redis.call('DEL', status)
redis.call('ZREM', profile, ARGV[2])
redis.call('ZREM', home, ARGV[2])
redis.call('HINCRBY', user, 'posts', -1)
-- PUBLISH, not SPUBLISH: on a Cluster it reaches the subscribers of every
-- node (the status caches, WithStatusCache).
if ARGV[3] and ARGV[3] ~= '' then redis.call('PUBLISH', ARGV[3], ARGV[4]) end
return {1, redis.call('ZCARD', KEYS[5]) + redis.call('ZCARD', KEYS[6]), f[1] or '', f[2] or '', f[3] or '', f[4] or '', f[5] or ''}
