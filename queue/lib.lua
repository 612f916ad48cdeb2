-- lib.lua: helpers of every queue script, prepended after check.lua.
--
-- A script that changes state runs in two phases: it first reads every
-- key it will write, and checks its type (and the values it will parse),
-- then it writes. A key someone else wrote (a wrong type, a malformed
-- value) makes it fail in the first phase, having changed nothing: Redis
-- does not roll back a script that fails midway. Most checks are the reads
-- the script needs anyway, run through redis.pcall (rd); a key the script
-- writes without reading it first is checked with TYPE (need).
--
-- A task is one field of the tasks HASH, '<id>', holding its packed
-- fields and then its payload, as the Go side packs them:
--   <len q>:<q><len name>:<name><max retries>:<len nonce>:<nonce><payload>
-- (q the queue's name; nonce that of the enqueue call for an ID given by
-- the caller, else empty, followed for a unique task by '/' and its
-- uniqueness key: a nonce holds no '/'). A failed task also has '<id>:a'
-- (failed attempts, an integer) and '<id>:e' (last error); so no ID ends
-- in ':a' or ':e' (Enqueue refuses them).

local BAD       -- the first error met while checking: the script returns it before any write
local SEEN = {} -- key -> true once its type is known to be right
local LEN = {}  -- list key -> its length, read before the writes and kept up to date by them

-- wrong records that key holds a type other than want.
local function wrong(key, want, role)
  if not BAD then
    BAD = key_error('WRONGTYPE', key, role, 'a ' .. redis.call('type', key).ok, 'a ' .. want)
  end
end

-- corrupt records that field of the hash key holds v, which is not want.
local function corrupt(key, role, field, v, want)
  if not BAD then
    BAD = key_error('CORRUPT', key, role .. ' field ' .. field, string.format('%q', string.sub(v, 1, 40)), want)
  end
end

-- rd runs the read command cmd on key, which must be missing or of type
-- want, and returns its reply; on an error it records it and returns nil.
local function rd(want, role, cmd, key, ...)
  local r = redis.pcall(cmd, key, ...)
  if type(r) == 'table' and r.err then
    if string.sub(r.err, 1, 9) == 'WRONGTYPE' then
      wrong(key, want, role)
    elseif not BAD then
      BAD = r
    end
    return nil
  end
  SEEN[key] = true
  return r
end

-- need checks with TYPE that key is missing or of type want, unless a read
-- has shown it.
local function need(key, want, role)
  if SEEN[key] or BAD then return end
  SEEN[key] = true
  local t = redis.call('type', key).ok
  if t ~= 'none' and t ~= want then
    BAD = key_error('WRONGTYPE', key, role, 'a ' .. t, 'a ' .. want)
  end
end

-- llen reads the length of the list key (once per script).
local function llen(key, role)
  if LEN[key] == nil then
    LEN[key] = rd('list', role, 'llen', key) or 0
  end
  return LEN[key]
end

-- wake pushes a wake token to the signal list key unless one is pending;
-- unwake deletes the pending ones. The list's length must have been read.
local function wake(key)
  if LEN[key] == 0 then
    redis.call('rpush', key, '1')
    LEN[key] = 1
  end
end
local function unwake(key)
  if LEN[key] > 0 then
    redis.call('del', key)
    LEN[key] = 0
  end
end

-- header returns the queue name, max retries, enqueue nonce, task name and
-- uniqueness key (nil if none) of a packed task, or nil if v is malformed.
local function header(v)
  local _, e, n = string.find(v, '^(%d+):') -- the queue's name
  if not e then return nil end
  n = tonumber(n)
  local q = string.sub(v, e + 1, e + n)
  if #q ~= n then return nil end
  _, e, n = string.find(v, '^(%d+):', e + n + 1) -- the task's name
  if not e then return nil end
  local name = string.sub(v, e + 1, e + n)
  local i = e + tonumber(n) + 1
  local m
  _, e, m = string.find(v, '^(%d+):', i) -- max retries
  if not e then return nil end
  _, e, n = string.find(v, '^(%d+):', e + 1) -- the nonce
  if not e then return nil end
  n = tonumber(n)
  if #v < e + n then return nil end
  local c = string.sub(v, e + 1, e + n)
  local slash = string.find(c, '/', 1, true)
  if not slash then return q, tonumber(m), c, name end
  -- (Two statements: gopher-lua, in miniredis, assigns c before it reads
  -- c for u in a multiple assignment.)
  local u = string.sub(c, slash + 1)
  return q, tonumber(m), string.sub(c, 1, slash - 1), name, u
end

-- now_ms returns the server's clock in Unix ms.
local function now_ms()
  local t = redis.call('time')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- chunked calls cmd on key with the values of vals, at most 2000 per call
-- (unpack has a limit).
local function chunked(cmd, key, vals)
  for i = 1, #vals, 2000 do
    redis.call(cmd, key, unpack(vals, i, math.min(i + 1999, #vals)))
  end
end
