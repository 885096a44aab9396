#!lua flags=allow-oom
-- One of the canary's keys: its round lease (ARGV[3] = 'nx': only when no replica holds it) or
-- its last verdicts. A few hundred bytes each, written once per interval, so written even
-- when maxmemory is reached. KEYS[1] the key; ARGV: the value, its life (ms), 'nx' or ''.
-- A value of the wrong type is not ours and would stop every round: it is replaced.
-- Returns 1 when written, 0 when the lease is held.
if redis.call('TYPE', KEYS[1]).ok ~= 'string' then
  redis.call('DEL', KEYS[1])
end
if ARGV[3] == 'nx' then
  if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
