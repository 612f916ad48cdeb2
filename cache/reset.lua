-- reset.lua: delete a key, whatever it holds (Guard.Reset: a guard's
-- window; Limiter.Reset: a limiter's history). Run as a once-script: a
-- re-send is answered from the first run's record instead of deleting
-- again, which would undo a write that another client made between the
-- two runs (a call a Guard let through, a request a Limiter counted). DEL
-- takes a key of any type, so there is nothing to check and no refusal.
-- KEYS[1] the key
-- returns 1
redis.call('del', KEYS[1])
return 1
