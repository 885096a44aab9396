#!lua flags=allow-oom
-- GCRA on Redis's clock: the one script of every budget the fleet shares (a key's quota, a
-- platform's outbound budget and its refresh share). KEYS[1] the budget's state: its
-- theoretical arrival time (us). ARGV: emission interval (us), burst, units wanted (at least
-- 1), the longest acceptable wait (us; 0: only what fits now). As many of the wanted units as
-- fit by then are taken (at least 1, or none: then nothing is taken).
-- Returns {units taken, remaining, wait_us, reset_us}: taken, the wait before the first unit
-- (when none was taken, before one would be free now); reset, until the budget is whole.
local key = KEYS[1]
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local want = math.max(1, math.floor(tonumber(ARGV[3] or '1') or 1))
local max_wait = tonumber(ARGV[4] or '0') or 0
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local window = interval * burst
local tat = now
-- The stored state is judged on its own, never against this caller's limits (replicas of a
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
-- Units that fit within the wait: tat + n * interval <= now + window + max_wait (none when
-- another replica's larger burst took the budget past this caller's window).
local fits = math.floor((now + max_wait + window - tat) / interval)
if fits >= 1 then
  local taken = math.min(want, fits)
  local new_tat = tat + taken * interval
  local reset = new_tat - now
  local wait = math.max(0, tat + interval - now - window)
  redis.call('SET', key, string.format('%.0f', new_tat), 'PX', math.max(1, math.ceil(reset / 1000)))
  return {taken, math.max(0, math.floor((window - reset) / interval)), wait, reset}
end
return {0, 0, tat + interval - now - window, tat - now}
