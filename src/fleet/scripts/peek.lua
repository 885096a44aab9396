-- What a flight waiter needs: KEYS entry, lock (one slot). ARGV: the largest value accepted,
-- the oldest fetch time accepted (Unix ms; '0' = any).
-- Returns {entry or false, 1 if a live lock is held}: an entry fetched before ARGV[2] is not
-- returned (the waiter wants the newer one the lock's holder is fetching).
local entry = false
local ty = redis.call('TYPE', KEYS[1]).ok
if ty == 'string' and redis.call('STRLEN', KEYS[1]) <= tonumber(ARGV[1]) then
  entry = redis.call('GET', KEYS[1])
  if string.len(entry) >= 12 and string.byte(entry, 1) == 80 and string.byte(entry, 2) == 2 then
    local fetched = 0
    for i = 4, 11 do fetched = fetched * 256 + string.byte(entry, i) end
    if fetched < tonumber(ARGV[2]) then entry = false end
  end
end
-- A lock in its last millisecond (PTTL 0) still exists, and lock.lua would find it held: so
-- it is held here too, or a waiter told "gone" would try to lock it and be told "held".
local held = 0
if redis.call('TYPE', KEYS[2]).ok == 'string' and redis.call('PTTL', KEYS[2]) >= 0 then held = 1 end
return {entry, held}
