#!lua flags=allow-oom
-- Append one replica's records of a platform's outcomes to the fleet's, keep the newest, and
-- answer them. KEYS[1] the platform's list. ARGV[1] its expiry (ms), ARGV[2] how many records
-- to keep; then the records, oldest first. Answers the kept records, oldest first.
for i = 3, #ARGV do
  redis.call('RPUSH', KEYS[1], ARGV[i])
end
local keep = tonumber(ARGV[2]) or 1024
redis.call('LTRIM', KEYS[1], -keep, -1)
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return redis.call('LRANGE', KEYS[1], 0, -1)
