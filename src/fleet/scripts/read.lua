-- One cached entry. KEYS[1] the entry. ARGV[1] the largest value accepted (bytes).
-- A value of the wrong type or size is not ours: it is removed and read as a miss.
local ty = redis.call('TYPE', KEYS[1]).ok
if ty == 'none' then return false end
if ty ~= 'string' or redis.call('STRLEN', KEYS[1]) > tonumber(ARGV[1]) then
  redis.call('DEL', KEYS[1])
  return false
end
return redis.call('GET', KEYS[1])
