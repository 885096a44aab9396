#!lua flags=allow-oom
-- Read one name's entry, or take its flight lock when there is none: one call, so that a
-- flight cannot miss an answer stored between its read and its lock. KEYS: entry, lock (one
-- slot). ARGV: token, lock expiry (ms), the largest entry accepted (bytes), the oldest fetch
-- time accepted (Unix ms; '0' = any).
-- Returns {entry, 0} when there is an answer, {false, 1} when the lock is taken, {false, 0}
-- when another flight holds it.
-- An entry fetched before ARGV[4] is kept but not answered: the caller wants a newer one (a
-- background refresh, or a caller's max-age), so the flight goes on to the lock.
-- An entry of the wrong type, size or format is not ours: removed and read as none. A lock that is not
-- one of ours (wrong type, no expiry) would block every flight: removed too.
local ty = redis.call('TYPE', KEYS[1]).ok
if ty == 'string' and redis.call('STRLEN', KEYS[1]) <= tonumber(ARGV[3]) then
  local v = redis.call('GET', KEYS[1])
  -- An entry of ours starts with 'P' and format version 2 (see SharedEntry::encode); bytes 4
  -- to 11 are its fetch time (Unix ms, big-endian).
  if string.len(v) >= 12 and string.byte(v, 1) == 80 and string.byte(v, 2) == 2 then
    local fetched = 0
    for i = 4, 11 do fetched = fetched * 256 + string.byte(v, i) end
    if fetched >= tonumber(ARGV[4]) then return {v, 0} end
  else
    redis.call('DEL', KEYS[1])
  end
elseif ty ~= 'none' then
  redis.call('DEL', KEYS[1])
end
ty = redis.call('TYPE', KEYS[2]).ok
if ty ~= 'none' and (ty ~= 'string' or redis.call('PTTL', KEYS[2]) < 0) then
  redis.call('DEL', KEYS[2])
end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return {false, 1} end
return {false, 0}
