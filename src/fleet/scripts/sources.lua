#!lua flags=allow-oom
-- Merge one replica's evidence about a platform's sources into the fleet's, and answer the
-- fleet's. KEYS[1] the platform's hash. ARGV[1] the hash's expiry (ms); then, per source,
-- five values: its label, 1 if it read since the last merge (its streak starts again), the
-- refusals since, the mask of routes that refused it (31 bits), the digests of the names it
-- was refused for (comma-separated, at most 8). Fields per source: `L:r` refusals since its
-- last read, `L:m` route mask, `L:n` name digests, `L:t` its last read (ms, Redis clock).
-- Answers, per source: refusals, route mask, distinct names, ms since its last read (-1:
-- never). A field of the wrong format is read as absent.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i = 2, #ARGV, 5 do
  local l, read, refused, mask, names = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]) or 0,
    tonumber(ARGV[i + 3]) or 0, ARGV[i + 4]
  if read == '1' then
    redis.call('HSET', KEYS[1], l .. ':r', 0, l .. ':m', 0, l .. ':n', '', l .. ':t', now)
  end
  local r = (tonumber(redis.call('HGET', KEYS[1], l .. ':r')) or 0) + refused
  local m = bit.bor(tonumber(redis.call('HGET', KEYS[1], l .. ':m')) or 0, mask)
  local n = redis.call('HGET', KEYS[1], l .. ':n')
  if type(n) ~= 'string' then n = '' end
  local seen, count = {}, 0
  for d in string.gmatch(n, '[^,]+') do
    if not seen[d] and count < 8 then seen[d] = true; count = count + 1 end
  end
  for d in string.gmatch(names, '[^,]+') do
    if not seen[d] and count < 8 then seen[d] = true; count = count + 1 end
  end
  local kept = {}
  for d in pairs(seen) do kept[#kept + 1] = d end
  redis.call('HSET', KEYS[1], l .. ':r', r, l .. ':m', m, l .. ':n', table.concat(kept, ','))
  local last = tonumber(redis.call('HGET', KEYS[1], l .. ':t'))
  out[#out + 1] = r
  out[#out + 1] = m
  out[#out + 1] = count
  out[#out + 1] = last and (now - last) or -1
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return out
