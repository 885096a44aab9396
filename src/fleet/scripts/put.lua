-- Store one name's answer. KEYS: entry, stale copy, flight lock (one hash slot).
-- ARGV: value, entry TTL (ms), stale TTL (ms; 0 = a not-found: the stale copy goes),
-- the flight token to release ('' = none).
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if ARGV[3] == '0' then
  redis.call('DEL', KEYS[2])
else
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[3])
end
if ARGV[4] ~= '' and redis.call('TYPE', KEYS[3]).ok == 'string'
    and redis.call('GET', KEYS[3]) == ARGV[4] then
  redis.call('DEL', KEYS[3])
end
return 1
