-- drop.lua: one step of DB.Drop. KEYS[1] live ranges (ZSET), KEYS[2]
-- version (STRING); ARGV[1] SCAN cursor ("0": the first step), ARGV[2] SCAN
-- MATCH pattern of the data set's keys, ARGV[3] SCAN COUNT, ARGV[4] records
-- key prefix, ARGV[5] staged ranges key prefix, ARGV[6] tombstone key
-- prefix, ARGV[7] tombstone TTL (ms), ARGV[8] import marker key prefix.
-- The first step UNLINKs the live data set (ranges, version, the live
-- version's records) at once for every reader. Every step then runs one
-- SCAN step on the node of the data set's slot and UNLINKs the staged
-- ranges, import markers and the records of every version but the live one
-- (a crashed import's, or those of an import running now), setting a tombstone for
-- each version it met: that import's commit fails (commit.lua). UNLINK
-- frees a big key in the background. Returns {next cursor, keys unlinked}.
-- The first step runs as a once-script (script.NewOnce: a reply record is
-- the last key, its TTL the last argument): re-run, it would UNLINK an
-- import that committed after it ran. A later step is idempotent: a
-- re-run continues the same scan, finds less to unlink and spares the live
-- version's records, whatever committed meanwhile.
local bad
if ARGV[1] == '0' then
  bad = check_types({KEYS[1], 'zset', 'geoip ranges', KEYS[2], 'string', 'geoip version'})
else
  bad = check_types({KEYS[2], 'string', 'geoip version'})
end
if bad then return bad end
local live = redis.call('get', KEYS[2])
local n = 0
if ARGV[1] == '0' then
  if live then
    bad = check_types({ARGV[4] .. live, 'hash', 'geoip records'})
    if bad then return bad end
    n = redis.call('unlink', KEYS[1], KEYS[2], ARGV[4] .. live)
  else
    n = redis.call('unlink', KEYS[1])
  end
  live = false
end
local r = redis.call('scan', ARGV[1], 'match', ARGV[2], 'count', ARGV[3])
local rp, sp, mp = ARGV[4], ARGV[5], ARGV[8]
for _, k in ipairs(r[2]) do
  local v
  if string.sub(k, 1, #sp) == sp then
    v = string.sub(k, #sp + 1)
  elseif string.sub(k, 1, #mp) == mp then
    v = string.sub(k, #mp + 1)
  elseif string.sub(k, 1, #rp) == rp then
    v = string.sub(k, #rp + 1)
    if v == live then v = nil end
  end
  if v then
    n = n + redis.call('unlink', k)
    redis.call('set', ARGV[6] .. v, '1', 'px', ARGV[7])
  end
end
return {r[1], n}
