#!lua flags=allow-oom
-- Reserve-then-wait for one platform's fleet budget, on Redis's clock. KEYS[1] the budget's
-- next free slot (us). ARGV: interval (us), burst, longest acceptable wait (us).
-- Returns {reserved 0/1, wait_us}: a refused reservation takes no slot.
local key = KEYS[1]
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local max_wait = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local window = interval * burst
local tat = now
-- The stored slot is judged on its own, never against this caller's limits (replicas of a
-- rollout differ in them): ours is a number whose key expires when that time comes, as
-- written below. Anything else (wrong type, junk, no or another expiry) counts as no state.
-- A second of slack: under load Redis reads its clock for expiries and for TIME at moments
-- that can lie milliseconds apart, and a sound value read as junk would refill the bucket.
if redis.call('TYPE', key).ok == 'string' and redis.call('STRLEN', key) <= 24 then
  local stored = tonumber(redis.call('GET', key))
  local left_ms = redis.call('PTTL', key)
  if stored and left_ms > 0 and stored > now and stored <= now + left_ms * 1000 + 1000000 then
    tat = stored
  end
end
local new_tat = tat + interval
local wait = math.max(0, new_tat - now - window)
if wait > max_wait then return {0, wait} end
redis.call('SET', key, string.format('%.0f', new_tat), 'PX', math.max(1, math.ceil((new_tat - now) / 1000)))
return {1, wait}
