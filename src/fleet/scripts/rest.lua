#!lua flags=allow-oom
-- Mark something resting (a platform's breaker, a proxy) for ARGV[1] ms; never shortens a
-- longer rest. KEYS[1] the marker. A marker of the wrong type or without expiry is replaced.
local left = redis.call('PTTL', KEYS[1])
if left < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
end
return 1
