#!lua flags=allow-oom
-- Release a flight lock only if it is still the caller's. KEYS[1] the lock. ARGV[1] the token.
if redis.call('TYPE', KEYS[1]).ok == 'string' and redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
