-- The canary's last verdicts. KEYS[1] the key; ARGV[1] the largest value accepted (bytes).
-- A value of the wrong type or size is not ours: read as none (the next round replaces it).
if redis.call('TYPE', KEYS[1]).ok ~= 'string' then return false end
if redis.call('STRLEN', KEYS[1]) > tonumber(ARGV[1]) then return false end
return redis.call('GET', KEYS[1])
