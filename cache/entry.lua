-- entry.lua: what the Cache entry scripts share; prepended to each of them
-- (after check.lua). An entry's val key holds its encoded value, or, while
-- a caller loads it, that caller's lease marker: MARK .. token, with ':w'
-- appended once a waiter has registered. Whoever replaces a marker with ':w'
-- (the loader's store, a Set, a Delete, a failed load's release) pushes to
-- that lease's own wake list, <wake prefix> .. token, so that a waiter of
-- one lease never misses its push because of another lease.
local MARK = '\0ria:lease:'

-- lease_of(v): the token of the lease marker v, and whether a waiter has
-- registered on it; nil for a value or a missing entry.
local function lease_of(v)
  if not v or string.sub(v, 1, #MARK) ~= MARK then
    return nil, false
  end
  local rest = string.sub(v, #MARK + 1)
  if string.sub(rest, -2) == ':w' then
    return string.sub(rest, 1, -3), true
  end
  return rest, false
end

-- read(key, role): the STRING at key (false when missing), or nil and an
-- error reply if key holds another type. The GET is the type check.
local function read(key, role)
  local v = redis.pcall('get', key)
  if type(v) == 'table' and v.err then
    return nil, check_type(key, 'string', role)
  end
  return v
end

-- wake(list, elem, ms): push elem, for ms, to list, the wake list of a
-- lease that ends now (so nothing else was pushed there).
local function wake(list, elem, ms)
  redis.call('rpush', list, elem)
  redis.call('pexpire', list, ms)
end

-- invalidate(channel, msg): publish a near cache invalidation (near.go),
-- unless channel is '' or absent (the cache has no near cache). PUBLISH,
-- not SPUBLISH: on a Cluster it reaches the subscribers of every node.
local function invalidate(channel, msg)
  if channel and channel ~= '' then
    redis.call('publish', channel, msg)
  end
end
