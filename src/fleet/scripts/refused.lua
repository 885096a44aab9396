#!lua flags=allow-oom
-- One more fresh session of a gateway refused in a row: adds 1 to KEYS[1] and keeps it for
-- ARGV[1] ms; returns the count. A value of the wrong type or format counts as 0 and is
-- replaced.
local ok, value = pcall(redis.call, 'GET', KEYS[1])
local count = 0
if ok and value then
  count = tonumber(value) or 0
end
count = count + 1
redis.call('SET', KEYS[1], count, 'PX', ARGV[1])
return count
