-- grant.lua (internal/wait, GrantLua): the grant steps of an acquire
-- script whose caller may have pipelined a blocking pop on its grant list
-- (wake mode, see Turn.AttemptIn).
-- grant_fail returns the key error b; in wake mode it first wakes the
-- pipelined pop (which takes the value back at once), if the grant key is
-- a list (role names it in the error otherwise).
local function grant_fail(grant, wake, role, b)
  if wake and not check_type(grant, 'list', role) then
    redis.call('RPUSH', grant, '')
    redis.call('PEXPIRE', grant, 1000)
  end
  return b
end
-- grant_give hands the integer v to the pipelined pop in wake mode; the
-- grant list lives ttl ms.
local function grant_give(grant, wake, v, ttl)
  if wake then
    redis.call('RPUSH', grant, string.format('%d', v))
    redis.call('PEXPIRE', grant, ttl)
  end
end

