-- page.lua: a page of a timeline on one server (Page, ListPage): the
-- status IDs and the statuses' fields in one script. A status deleted but
-- not yet cleaned from the timeline is skipped and the page topped up from
-- further down, at most ARGV[4] more reads, as the Go side does elsewhere.
-- An entry that is not a status ID of this package is skipped, as in Go.
-- The status HASHes' keys are built from the key prefix (they cannot be
-- declared before the timeline is read): one server only, as feed.lua.
-- A home timeline when inactive users are not fed (WithInactiveAfter)
-- has its read recorded (home_seen and home_seen_write, from seen.lua)
-- once every key was checked; the script writes nothing else.
-- KEYS[1] timeline ZSET   KEYS[2] (a home timeline when inactive users
-- are not fed) the user HASH
-- ARGV[1] key prefix: a user's key is <prefix>{<uid>}:<part>
-- ARGV[2] offset   ARGV[3] count   ARGV[4] top-ups   ARGV[5] the
-- timeline's role (for a type error)   ARGV[6] with KEYS[2]: how old (ms)
-- a recorded read may be before this one is recorded
-- returns {next offset, id, uid, login, message, posted, lat, lon, ...}
-- (a missing field is nil), {-1} when the home timeline is being
-- regenerated (the caller enqueues its regeneration), or the check error
-- of a key of another type
local tl, pre = KEYS[1], ARGV[1] .. '{'
local nxt, count, tops = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local regen, due
if KEYS[2] then
  regen, due = home_seen(KEYS[2], tl, tonumber(ARGV[6]))
  if type(regen) == 'table' then return regen end
  if regen then
    home_seen_write(KEYS[2], regen, due)
    return {-1}
  end
end
local bad = check_types({tl, 'zset', ARGV[5]})
if bad then return bad end
local match, pcall = string.match, redis.pcall
local out, got = {0}, 0
for _ = 0, tops do
  local want = count - got
  if want <= 0 then break end
  local ids = redis.call('ZREVRANGE', tl, nxt, nxt + want - 1)
  nxt = nxt + #ids
  for _, id in ipairs(ids) do
    local uid, num = match(id, '^([a-z0-9_%.%-]+):([1-9]%d*)$')
    if uid and #uid <= 32 and #num <= 19 then
      local key = pre .. uid .. '}:status:' .. num
      local h = pcall('HMGET', key, 'uid', 'login', 'message', 'posted', 'lat', 'lon')
      if h.err then
        return check_types({key, 'hash', 'social status'}) or h
      end
      if h[1] or h[2] or h[3] or h[4] or h[5] or h[6] then
        local o = #out
        out[o + 1], out[o + 2], out[o + 3], out[o + 4] = id, h[1], h[2], h[3]
        out[o + 5], out[o + 6], out[o + 7] = h[4], h[5], h[6]
        got = got + 1
      end
    end
  end
  if #ids < want then break end
end
-- Every key was checked: record the read (the script's only write).
if KEYS[2] then home_seen_write(KEYS[2], false, due) end
out[1] = nxt
return out
