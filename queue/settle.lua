-- settle.lua: apply the outcomes of finished tasks (ack, retry, dead,
-- release) when no take is due to carry them: a worker settles so while it
-- is blocked waiting for work, with a timeout computed before these
-- outcomes. So a retry, which may be due before that timeout, pushes a
-- token to the worker's own wake list: the worker then takes again, which
-- computes the right time to wait. (common.lua is prepended.)
-- KEYS[1..7] the group's keys (common.lua)
-- KEYS[8] the worker's wake list (LIST)
-- ARGV[1] dead limit   ARGV[2] '1' to wake the worker after a retry
-- ARGV[3..] outcomes (see settle in common.lua)
-- returns the number of retries scheduled
local _, retries = settle(ARGV, 3, now_ms(), tonumber(ARGV[1]))
if retries > 0 and ARGV[2] == '1' then
  redis.call('rpush', KEYS[8], '1')
  redis.call('pexpire', KEYS[8], 30000)
end
return retries
