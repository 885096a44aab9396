-- How long each marker in KEYS still rests (ms, 0 = not resting). All KEYS share one slot.
local out = {}
for i, key in ipairs(KEYS) do
  out[i] = math.max(0, redis.call('PTTL', key))
end
return out
