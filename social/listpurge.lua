-- listpurge.lua: list_purge, shared by listdrop.lua and listgone.lua
-- (prepended).

-- list_purge removes the members done (whose own side no longer lists the
-- list) from the members ZSET of a list being deleted, and returns the
-- next page of at most page members; when none is left it deletes the
-- members and timeline keys (the list is gone) and returns an empty page.
local function list_purge(members, tl, done, page)
  for i = 1, #done, 1000 do
    redis.call('ZREM', members, unpack(done, i, math.min(i + 999, #done)))
  end
  local rest = redis.call('ZRANGE', members, 0, page - 1)
  if #rest == 0 then redis.call('DEL', members, tl) end
  return rest
end
