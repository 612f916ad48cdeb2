-- commit.lua: make a staged data set live, at once for every reader, and
-- drop the previous one. KEYS[1] live ranges (ZSET), KEYS[2] staged ranges
-- (ZSET), KEYS[3] version (STRING: the live data set's version), KEYS[4]
-- tombstone of the new version (set by a Drop that deleted some of its
-- staged keys: then nothing goes live), KEYS[5] the import's marker
-- (STRING, set by its first pipeline and never recreated, its TTL ending
-- no later than the staged keys': gone if they expired at some point, even
-- if later pipelines recreated them with part of the data); ARGV[1]
-- records key prefix, ARGV[2] the new version. Run as a once-script
-- (script.NewOnce: a reply record is the last key, its TTL the last
-- argument): a re-send after a lost reply gets the first run's reply, even
-- if another import committed meanwhile (a re-run would find this version
-- gone and its marker deleted, and answer EXPIRED for data that went live).
local bad = check_types({KEYS[1], 'zset', 'geoip ranges', KEYS[2], 'zset', 'geoip staged ranges',
  KEYS[3], 'string', 'geoip version', ARGV[1] .. ARGV[2], 'hash', 'geoip staged records',
  KEYS[5], 'string', 'geoip import marker'})
if bad then return bad end
local old = redis.call('get', KEYS[3])
if old == ARGV[2] then return 1 end
if redis.call('exists', KEYS[4]) == 1 then
  return redis.error_reply('DROPPED geoip: data set dropped during the import')
end
if redis.call('exists', KEYS[5]) == 0 or redis.call('exists', KEYS[2]) == 0 then
  return redis.error_reply('EXPIRED geoip: staged data set ' .. ARGV[2] .. ' expired during the import')
end
redis.call('unlink', KEYS[1])
redis.call('rename', KEYS[2], KEYS[1])
redis.call('persist', KEYS[1])
redis.call('persist', ARGV[1] .. ARGV[2])
redis.call('del', KEYS[5])
redis.call('set', KEYS[3], ARGV[2])
if old then
  redis.call('unlink', ARGV[1] .. old)
end
return 1
