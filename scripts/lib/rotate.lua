-- A wrk script that spreads requests over numbered names, PREFIX00 to PREFIX63: each wrk
-- thread cycles over its own slice of them, so two connections rarely ask for one name at once
-- (callers of one name at the same moment would share one fetch, or one Redis read).
--
-- Environment:
--   ROTATE_PREFIX   the path before the number (default /short-video/profile/bench.user_)
--   ROTATE_THREADS  wrk's -t, so the slices cover every name (default 2)
--   ROTATE_NAMES    how many names there are (default 64: the sample pages' bench.user_NN)
local prefix = os.getenv("ROTATE_PREFIX") or "/short-video/profile/bench.user_"
local names = tonumber(os.getenv("ROTATE_NAMES") or "64")
local slice = math.max(1, math.floor(names / tonumber(os.getenv("ROTATE_THREADS") or "2")))
local threads = 0

function setup(thread)
  thread:set("first", threads * slice)
  threads = threads + 1
end

function init(args)
  i = 0
end

function request()
  i = i + 1
  return wrk.format(nil, string.format("%s%02d", prefix, first + i % slice))
end
