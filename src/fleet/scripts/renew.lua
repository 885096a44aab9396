#!lua flags=allow-oom
-- Extend a flight lock by one lease, only if it is still the caller's. KEYS[1] the lock.
-- ARGV: the token, the lease (ms). Returns 1 if renewed, 0 if the lock is gone or another's.
if redis.call('TYPE', KEYS[1]).ok == 'string' and redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
