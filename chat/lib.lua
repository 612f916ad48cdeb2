-- lib.lua: shared by the chat scripts that store messages or read the id
-- counter (prepended).

-- send_msg stores one message of sender in the chat and wakes the other
-- members: the next id (INCR ids), the server time in ms, the packed
-- member '<id>:<ms>:<len(sender)>:<sender><payload>' scored by the id,
-- then PUBLISH of the id on '<wake prefix>{<member>}:wake' for every other
-- member, unless wake is nil (create.lua: Create publishes once the chat
-- is on the members' lists). Returns {id, ms}.
local function send_msg(kmembers, kmsgs, kids, sender, payload, wake)
  local id = redis.call('INCR', kids)
  local t = redis.call('TIME')
  local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local sid = string.format('%d', id)
  local packed = sid .. ':' .. string.format('%d', ms) .. ':' .. #sender .. ':' .. sender .. payload
  redis.call('ZADD', kmsgs, id, packed)
  if not wake then return {id, ms} end
  for _, m in ipairs(redis.call('ZRANGE', kmembers, 0, -1)) do
    if m ~= sender then
      redis.call('PUBLISH', wake .. '{' .. m .. '}:wake', sid)
    end
  end
  return {id, ms}
end

-- trim deletes the messages every member has seen (ids up to the least
-- seen id of the members).
local function trim(kmembers, kmsgs)
  local least = redis.call('ZRANGE', kmembers, 0, 0, 'WITHSCORES')
  if least[2] then
    redis.call('ZREMRANGEBYSCORE', kmsgs, '-inf', least[2])
  end
end

-- check_ids: the message id counter is missing or an integer from 0 to
-- 2^53 - 1: the ids a send gives stay exact in Lua's numbers and in ZSET
-- scores, and none is 0 or negative (which no member would fetch). Any
-- other value is corrupt (a *ria.KeyError, ErrCorrupt).
local function check_ids(key)
  local bad = check_int(key, 'chat ids')
  if bad then return bad end
  local v = redis.call('GET', key)
  if v and (string.sub(v, 1, 1) == '-' or not is_count(v) or v == '9007199254740992') then
    return key_error('CORRUPT', key, 'chat ids', string.format('%q', string.sub(v, 1, 40)), 'an integer from 0 to 2^53-1')
  end
end
