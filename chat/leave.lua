-- leave.lua: remove user from a chat; delete the chat with its last member,
-- else trim the messages the remaining members have all seen (Redis in
-- Action 6.5.4, leave_chat). Deleting the chat deletes its file transfers
-- too (the ids in KEYS[4], each transfer's state and chunks), in this same
-- run: O(unfinished transfers) keys, UNLINKed so that their chunks are
-- freed in the background. Run once per call (script.NewOnce): a re-send
-- gets the first reply and writes nothing, so it cannot undo a Join of the
-- same user made since, nor touch a chat created again with the same id.
-- Every check comes before the first write. A new call on a chat with no
-- member left deletes what remains of it (a no-op once gone).
-- KEYS[1] members  KEYS[2] msgs  KEYS[3] ids (see create.lua)
-- KEYS[4] files SET of the chat's file ids
-- KEYS[5] file key prefix: transfer f's keys are KEYS[5]..f (state HASH)
-- and KEYS[5]..f..':data' (chunks HASH), in the chat's slot
-- ARGV[1] user
-- returns the members left
local bad = check_types({KEYS[1], 'zset', 'chat members', KEYS[2], 'zset', 'chat messages', KEYS[4], 'set', 'chat files'})
if bad then return bad end
bad = check_int(KEYS[3], 'chat ids')
if bad then return bad end
redis.call('ZREM', KEYS[1], ARGV[1])
local left = redis.call('ZCARD', KEYS[1])
if left == 0 then
  for _, f in ipairs(redis.call('SMEMBERS', KEYS[4])) do
    redis.call('UNLINK', KEYS[5] .. f, KEYS[5] .. f .. ':data')
  end
  redis.call('UNLINK', KEYS[2], KEYS[3], KEYS[4])
else
  trim(KEYS[1], KEYS[2])
end
return left
