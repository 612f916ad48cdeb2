-- endsession.lua: how one session ends, shared by clean.lua (the oldest
-- sessions, a batch at a time) and logout.lua (one session); prepended to
-- both. A session is its entry in the login HASH and in the recent ZSET,
-- its viewed items ZSET and its cart HASH.

-- session_spec appends to spec the check_types triples of a session's own
-- keys: its viewed items, and its cart unless keep_cart. Returns spec.
local function session_spec(spec, viewed, cart, keep_cart)
  spec[#spec + 1] = viewed; spec[#spec + 1] = 'zset'; spec[#spec + 1] = 'session viewed items'
  if not keep_cart then
    spec[#spec + 1] = cart; spec[#spec + 1] = 'hash'; spec[#spec + 1] = 'session cart'
  end
  return spec
end

-- end_session deletes a session's viewed items, its cart unless keep_cart,
-- and its login entry; returns 1 when it had a login entry, else 0. The
-- caller removes its recent entry (the cleaner does it by rank, for the
-- whole batch at once).
local function end_session(login, viewed, cart, token, keep_cart)
  redis.call('DEL', viewed)
  if not keep_cart then redis.call('DEL', cart) end
  return redis.call('HDEL', login, token)
end
