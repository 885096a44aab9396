-- Take one name's flight lock. KEYS[1] the lock. ARGV: token, expiry (ms). Returns 1 if taken.
-- A value that is not a lock of ours (wrong type, no expiry) would block every flight: removed.
local ty = redis.call('TYPE', KEYS[1]).ok
if ty ~= 'none' and (ty ~= 'string' or redis.call('PTTL', KEYS[1]) < 0) then
  redis.call('DEL', KEYS[1])
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0
