-- groups.lua: add an article to some groups and remove it from others
-- (Redis in Action 1.3.2, add_remove_groups) in one atomic step, and drop
-- the cached pages of every group whose membership changed. A
-- once-script (once.lua): a re-send is answered from the record of the
-- first run's reply and writes nothing, so it cannot add the article back
-- to a group another client removed it from meanwhile.
-- KEYS[1] time  ZSET article ID -> post time: the article must be in it
-- then, for each group, three keys: the group's SET of article IDs and its
-- two cached page ZSETs (by score, by time). The first ARGV[2] groups are
-- added to, the rest removed from.
-- ARGV[1] article ID   ARGV[2] number of groups to add the article to
-- returns the number of memberships changed; the error reply 'NOARTICLE'
-- (no such article) refuses the call having written nothing, not even a
-- record (a re-send is refused alike)
-- Every key is checked before the first write.
local spec = {KEYS[1], 'zset', 'voting time index'}
for i = 2, #KEYS, 3 do
  spec[#spec + 1] = KEYS[i]; spec[#spec + 1] = 'set'; spec[#spec + 1] = 'voting group'
  spec[#spec + 1] = KEYS[i + 1]; spec[#spec + 1] = 'zset'; spec[#spec + 1] = 'voting group cache'
  spec[#spec + 1] = KEYS[i + 2]; spec[#spec + 1] = 'zset'; spec[#spec + 1] = 'voting group cache'
end
local bad = check_types(spec)
if bad then return bad end

local id = ARGV[1]
if not redis.call('ZSCORE', KEYS[1], id) then return redis.error_reply('NOARTICLE voting: no such article') end
local nadd = tonumber(ARGV[2])
local changed = 0
local g = 0
for i = 2, #KEYS, 3 do
  local n
  if g < nadd then
    n = redis.call('SADD', KEYS[i], id)
  else
    n = redis.call('SREM', KEYS[i], id)
  end
  if n == 1 then
    redis.call('DEL', KEYS[i + 1], KEYS[i + 2])
    changed = changed + 1
  end
  g = g + 1
end
return changed
