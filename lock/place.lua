-- place.lua: how the scripts read a waiter's place in a lock's queue
-- (prepended, after internal/script's check.lua, to every script that
-- reads places: release and Break, the read/write lock's acquire, release
-- and leave, and State), so that State counts exactly the waiters a
-- release would hand the lock to.

-- live_place returns the TTL (ms, a string) and the mode ('r' or 'w'; nil
-- for an exclusive lock) of a place as an acquire writes it: "<place
-- expiry ms> <ttl ms>", or with rw "<place expiry ms> <ttl ms> <r|w>",
-- canonical and within 2^53 (SET PX and PEXPIRE take its TTL), whose
-- expiry is after now (server ms). It returns nil for a place that expired
-- or is malformed: a release skips (and wakes) that waiter.
local function live_place(place, now, rw)
  local e, d, m
  if rw then
    e, d, m = string.match(place, '^(%d+) (%d+) ([rw])$')
  else
    e, d = string.match(place, '^(%d+) (%d+)$')
  end
  if e and is_count(e) and is_count(d) and tonumber(e) > now and tonumber(d) > 0 then
    return d, m
  end
  return nil
end
