-- place.lua: how the scripts find the first live waiter of a semaphore's
-- queue (prepended, after internal/script's check.lua, to acquire and
-- release), so that a newcomer waits exactly for the waiters a release
-- would hand a permit to.

-- queue_head walks the queue from its head to its first live waiter: one
-- whose place in the waiters hash (expiry, server Unix ms) is after now and
-- that is not skip (nil: none). It returns that waiter (nil if none), the
-- entries ahead of it, which hold no live place (expired, missing or
-- malformed, or skip's), for the caller to drop (LTRIM the queue past them,
-- HDEL their places), and nil; or nil, nil and a key error if the queue or
-- the waiters key has another type. It writes nothing. late(w), if given,
-- is called for each waiter skipped because its place expired, so that a
-- release can wake it.
local function queue_head(queue, waiters, now, skip, late)
  local drop = {}
  local i = 0
  while true do
    local w = redis.pcall('LINDEX', queue, i)
    if type(w) == 'table' then return nil, nil, check_type(queue, 'list', 'semaphore queue') or w end
    if not w then return nil, drop, nil end
    i = i + 1
    local place = redis.pcall('HGET', waiters, w)
    if type(place) == 'table' then return nil, nil, check_type(waiters, 'hash', 'semaphore waiters') or place end
    place = tonumber(place or '')
    if place and w ~= skip then
      if place > now then return w, drop, nil end
      if late then late(w) end
    end
    drop[#drop + 1] = w
  end
end

-- drop_head takes the n first entries of the queue, and the places of the
-- entries in drop, out: the cleanup of a queue_head walk.
local function drop_head(queue, waiters, n, drop)
  if n > 0 then redis.call('LTRIM', queue, n, -1) end
  for j = 1, #drop, 1000 do
    redis.call('HDEL', waiters, unpack(drop, j, math.min(j + 999, #drop)))
  end
end
