-- Store one name's answer. KEYS: entry, stale record, flight lock (one hash slot).
-- ARGV: value, entry TTL (ms; '0' = not kept), stale record TTL (ms; '0' = drop it), the
-- flight token ('' = none: a flight that fetched without the fleet's lock).
-- Fenced by the token: an answer is stored while its token holds the lock (which is then
-- released), or when its lock lapsed and the entry stored is not as new as it (none, or one
-- fetched earlier: an entry kept past its TTL for stale-while-revalidate is what a refresh
-- replaces); never while another flight holds the lock (that flight started later: its answer
-- will be newer). Without a token, only while no flight holds the lock.
-- Returns 1 stored, 0 superseded (nothing written), 2 refused because Redis's memory is full
-- (nothing stored; the caller's lock released all the same).
-- Memory: a found profile runs this as written, so under maxmemory with noeviction it is the
-- cache that gives way, while counters and locks (scripts flagged allow-oom) are still written.
-- A not-found runs it with that flag (entries.rs): a few bytes, and a tombstone must be written
-- even then, or a replica could serve a profile the platform said is gone.
local holder = false
if redis.call('TYPE', KEYS[3]).ok == 'string' then holder = redis.call('GET', KEYS[3]) end
local token = ARGV[4]
local mine = token ~= '' and holder == token
if holder and not mine then return 0 end
-- The fetch time of a value of ours ('P', version 2, then flags): bytes 4 to 11 (Unix ms,
-- big-endian); 0 for anything else.
local function fetched_at(v)
  if type(v) ~= 'string' or string.len(v) < 12 or string.byte(v, 1) ~= 80
    or string.byte(v, 2) ~= 2 then return 0 end
  local t = 0
  for i = 4, 11 do t = t * 256 + string.byte(v, i) end
  return t
end
if token ~= '' and not holder and redis.call('TYPE', KEYS[1]).ok == 'string' then
  local stored = redis.call('GET', KEYS[1])
  if fetched_at(stored) >= fetched_at(ARGV[1]) then return 0 end
end
if ARGV[2] == '0' then
  -- An answer that is not served fresh (a not-found with negative_ttl 0): only its stale
  -- record (the tombstone) is kept. Sent for not-founds only, which run allow-oom.
  redis.call('DEL', KEYS[1])
else
  -- The first write: under maxmemory with noeviction it is refused, and nothing has changed.
  local stored = redis.pcall('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  if type(stored) == 'table' and stored.err then
    if string.sub(stored.err, 1, 3) ~= 'OOM' then return stored end
    if mine then redis.call('DEL', KEYS[3]) end
    return 2
  end
end
if ARGV[3] == '0' then
  redis.call('DEL', KEYS[2])
else
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[3])
end
if mine then redis.call('DEL', KEYS[3]) end
return 1
