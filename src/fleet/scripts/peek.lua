-- What a flight waiter needs: KEYS entry, lock (one slot). ARGV[1] the largest value accepted.
-- Returns {entry or false, 1 if a live lock is held}.
local entry = false
local ty = redis.call('TYPE', KEYS[1]).ok
if ty == 'string' and redis.call('STRLEN', KEYS[1]) <= tonumber(ARGV[1]) then
  entry = redis.call('GET', KEYS[1])
end
local held = 0
if redis.call('TYPE', KEYS[2]).ok == 'string' and redis.call('PTTL', KEYS[2]) > 0 then held = 1 end
return {entry, held}
