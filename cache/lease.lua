-- take_lease(lease, wake, token, ms): make token the holder of lease (a HASH
-- t = holder token, w = waiters counted) for ms, and empty the wake list so
-- that waiters only ever see pushes of this lease. Prepended to the scripts
-- that take a lease (get.lua, incr.lua).
local function take_lease(lease, wake, token, ms)
  redis.call('del', wake)
  redis.call('hset', lease, 't', token, 'w', 0)
  redis.call('pexpire', lease, ms)
end
