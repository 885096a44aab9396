-- wrk script for the soak of scripts/load.sh: a fixed count of requests over a mix of
-- cached, uncached, not-found and blocked names; counts statuses per class; reports totals,
-- unexpected answers, throughput and p50/p99 latency.
--
-- Environment: SOAK_REQUESTS_PER_THREAD (responses each wrk thread counts before stopping),
-- SOAK_DONE_DIR (each thread drops done.<n> there when it stops, so load.sh can end wrk
-- early: wrk itself always sleeps for -d). The names are the platforms' invented samples
-- (stand-in/src/*/), served by the nginx upstream load.sh configures.
--
-- Each request carries `x-request-id: soak-<class>-<thread>-<n>`; the service echoes a sane
-- id, so every response is attributed to its class exactly, whatever the connection order.
-- Classes rotate c, u, n, b (so each is a quarter of the requests):
--   c  cached     the sample profiles (warmed by load.sh)        -> 200
--   u  uncached   a never-seen photo-share name, upstream 404    -> 404 profile_not_found
--   n  not-found  the samples' missing names (negative cache)    -> 404 profile_not_found
--   b  blocked    throttled.demo, upstream 429                   -> 429 upstream_blocked
-- Anything else (another status, another problem code, a missing id, a socket error) is
-- unexpected.

local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } soak_timespec;
int clock_gettime(int clk_id, soak_timespec *tp);
]]

local function now()
  local ts = ffi.new("soak_timespec")
  ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC: comparable across threads
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
end

local CACHED = {
  "/short-video/profile/sunny.kitchen.lab",
  "/short-video/profile/quiet.fox_22",
  "/short-video/profile/tiny.baker_7",
  "/photo-share/profile/lumen.trails",
  "/photo-share/profile/quiet_harbor",
}
local NOT_FOUND = {
  "/short-video/profile/no_such_user_404",
  "/photo-share/profile/no.such.sample_user",
}
local BLOCKED = {
  "/short-video/profile/throttled.demo",
  "/photo-share/profile/throttled.demo",
}
local EXPECTED = {
  ["c:200"] = true,
  ["u:404:profile_not_found"] = true,
  ["n:404:profile_not_found"] = true,
  ["b:429:upstream_blocked"] = true,
}

-- Main state: the threads, to read their counts in done().
local threads = {}

function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end

-- Thread state.
function init(args)
  per_thread = tonumber(os.getenv("SOAK_REQUESTS_PER_THREAD") or "10000")
  done_dir = os.getenv("SOAK_DONE_DIR")
  sent, got = 0, 0
  counts = {}
  t_start, t_stop = nil, nil
  headers = {}
  for k, v in pairs(wrk.headers) do
    headers[k] = v
  end
end

function request()
  local i = sent
  sent = sent + 1
  if t_start == nil then
    t_start = now()
  end
  local round = math.floor(i / 4)
  local class, path
  local k = i % 4
  if k == 0 then
    class, path = "c", CACHED[round % #CACHED + 1]
  elseif k == 1 then
    class, path = "u", "/photo-share/profile/soak" .. tid .. "_" .. i
  elseif k == 2 then
    class, path = "n", NOT_FOUND[round % #NOT_FOUND + 1]
  else
    class, path = "b", BLOCKED[round % #BLOCKED + 1]
  end
  headers["X-Request-Id"] = "soak-" .. class .. "-" .. tid .. "-" .. i
  return wrk.format("GET", path, headers)
end

function response(status, hdrs, body)
  if got >= per_thread then
    return
  end
  got = got + 1
  local id = hdrs["x-request-id"] or hdrs["X-Request-Id"] or ""
  local class = id:match("^soak%-(%a)%-") or "?"
  local key = class .. ":" .. status
  if status ~= 200 then
    key = key .. ":" .. ((body or ""):match('"code":"([%w_]+)"') or "no_code")
  end
  counts[key] = (counts[key] or 0) + 1
  if got == per_thread then
    t_stop = now()
    if done_dir then
      local f = io.open(done_dir .. "/done." .. tid, "w")
      if f then
        f:write("done\n")
        f:close()
      end
    end
    wrk.thread:stop()
  end
end

function done(summary, latency, requests)
  local totals, total, unexpected = {}, 0, 0
  local first, last, finished = nil, nil, 0
  for _, t in ipairs(threads) do
    local c = t:get("counts") or {}
    for k, v in pairs(c) do
      totals[k] = (totals[k] or 0) + v
      total = total + v
      if not EXPECTED[k] then
        unexpected = unexpected + v
      end
    end
    local ts, te = t:get("t_start"), t:get("t_stop")
    if ts and (first == nil or ts < first) then
      first = ts
    end
    if te then
      finished = finished + 1
      if last == nil or te > last then
        last = te
      end
    end
  end
  local e = summary.errors
  local socket_errors = e.connect + e.read + e.write + e.timeout
  unexpected = unexpected + socket_errors
  local keys = {}
  for k in pairs(totals) do
    table.insert(keys, k)
  end
  table.sort(keys)
  io.write("soak: responses by class:status[:code] (c cached, u uncached, n not-found, b blocked)\n")
  for _, k in ipairs(keys) do
    io.write(string.format("  %-28s %9d%s\n", k, totals[k], EXPECTED[k] and "" or "  UNEXPECTED"))
  end
  io.write(string.format("  socket errors: connect %d, read %d, write %d, timeout %d\n",
    e.connect, e.read, e.write, e.timeout))
  local elapsed = (first and last) and (last - first) or 0
  local rps = elapsed > 0 and total / elapsed or 0
  io.write(string.format(
    "SOAK_RESULT threads=%d finished=%d total=%d unexpected=%d seconds=%.2f rps=%.0f p50_ms=%.2f p99_ms=%.2f max_ms=%.2f\n",
    #threads, finished, total, unexpected, elapsed, rps,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
end
