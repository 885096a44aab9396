#!/usr/bin/env bash
# The Grafana dashboard and the alert rules against a real Prometheus scraping the real service:
#   1. starts a loopback redis-server and the demo on it (release binary; short cache lifetimes,
#      a breaker that opens after 2 refusals, drift capture on), and Prometheus
#      ($PROMETHEUS, default Debian's /usr/bin/prometheus) on a free port, scraping the demo's
#      /metrics every second and evaluating deploy/prometheus/alerts.yml, with a temp config and
#      storage;
#   2. makes lookups of each kind: every call the demo's banner suggests (found, private, not
#      found, answered by the embed, refused, a bad name), one without a key, cache hits, a hit
#      in its revalidate window (a background refresh), a moved page (the drift switch: the
#      page unreadable and captured, the embed answering), Redis paused (errors, the replica on its own, then
#      back), Redis full (writes refused), and a stale answer while the breaker is open;
#   3. runs scripts/dashboard/check.py: every panel's query (every target, template variables
#      substituted) must parse and return series, every template variable must find values,
#      every alert rule must be healthy and every metric name it uses must have series, and every
#      profile_lookup_* metric the demo exports must be on some panel.
# Series the demo only makes in rare conditions are made here for real (Redis paused and full,
# the breaker open); those with a closed label set are exported at 0 from the start by the
# service itself (src/telemetry/zero.rs). Prints each phase's time. Needs prometheus, redis-server
# and redis-cli: without them it is skipped, or fails under CI=true.
#   PROFILE_LOOKUP_BIN   the binary to run (default: the release build, built if needed)
#   PROMETHEUS           the prometheus binary (default: prometheus on PATH)
#   DASHBOARD_KEEP_TMP=1 keep the temp dir (the demo's log, Prometheus's config and data)
set -euo pipefail
# shellcheck source=lib/rig.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/rig.sh"
cd "$REPO"

PROMETHEUS=${PROMETHEUS:-$(command -v prometheus || true)}
[[ -n $PROMETHEUS && -x $PROMETHEUS ]] || skip_unless_ci "prometheus is not installed (apt-get install prometheus)"
command -v redis-server >/dev/null || skip_unless_ci "redis-server is not installed"
command -v redis-cli >/dev/null || skip_unless_ci "redis-cli is not installed (apt-get install redis-tools)"
rig_binary
rig_workdir dashboard-check "${DASHBOARD_KEEP_TMP:-0}"
read -r prom_port redis_port <<<"$(rig_free_ports 2)"
rig_still_free "$prom_port" "$redis_port"

phase "redis-server and the demo"
rig_redis "$redis_port"
# `demo` does not validate its settings as `serve` does, so it would not create the capture
# folder itself.
mkdir -p "$T/captures"
# TTL 2 s and a 2 s revalidate window: a hit, then a hit in its window, then a stale answer fit
# in seconds. The breaker opens after 2 refused lookups in a row (the banner's last two calls
# open it too) and rests the platform for 3 s, so each phase below finds it closed again.
rig_demo PROFILE_LOOKUP__LOG__LEVEL=warn \
  PROFILE_LOOKUP__REDIS__URL="redis://127.0.0.1:$redis_port" \
  PROFILE_LOOKUP__RATE_LIMIT__PER_KEY_PER_MINUTE=100000 \
  PROFILE_LOOKUP__RATE_LIMIT__BURST=10000 \
  PROFILE_LOOKUP__CACHE__TTL_SECONDS=2 \
  PROFILE_LOOKUP__CACHE__REVALIDATE_SECONDS=2 \
  PROFILE_LOOKUP__BREAKER__FAILURE_THRESHOLD=2 \
  PROFILE_LOOKUP__BREAKER__COOLDOWN_SECONDS=3 \
  PROFILE_LOOKUP__UPSTREAM__CAPTURE_DIR="$T/captures"
echo "demo at $DEMO_URL, redis on 127.0.0.1:$redis_port"

phase "prometheus"
cat >"$T/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $REPO/deploy/prometheus/alerts.yml
scrape_configs:
  - job_name: profile-lookup
    static_configs:
      - targets: ["${DEMO_URL#http://}"]
YAML
"$PROMETHEUS" --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/prometheus-data" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=warn >"$T/prometheus.log" 2>&1 &
PIDS+=($!)
PROM="http://127.0.0.1:$prom_port"
scraped() {
  curl -sf "$PROM/api/v1/query?query=up" | python3 -c 'import json, sys
r = json.load(sys.stdin)["data"]["result"]
sys.exit(0 if r and r[0]["value"][1] == "1" else 1)' 2>/dev/null
}
for _ in $(seq 150); do scraped && break; sleep 0.2; done
scraped || die "Prometheus never scraped the demo: $(tail -20 "$T/prometheus.log")"
echo "$("$PROMETHEUS" --version 2>&1 | head -1) at $PROM, scraping $DEMO_URL/metrics every second"

phase "lookups of each kind"
# lookup PATH [CURL_ARGS...]: one lookup with the demo's key; sets STATUS and HEADERS.
lookup() {
  local path=$1
  shift
  HEADERS=$(curl -s -o /dev/null -D - -H "Authorization: Bearer $DEMO_KEY" "$@" "$DEMO_URL$path" | tr -d '\r')
  STATUS=$(sed -n '1s/^HTTP\/[0-9.]* \([0-9]*\).*/\1/p' <<<"$HEADERS")
}
# expect STATUS WHAT: the last lookup answered STATUS, or the check fails.
expect() {
  [[ $STATUS == "$1" ]] || die "$2: expected $1, got ${STATUS:-nothing}: $HEADERS"
  printf '%s  %s\n' "$STATUS" "$2"
}
header() { sed -n "s/^$1: //Ip" <<<"$HEADERS"; }
# The calls the banner suggests:
#   "  curl -s[i] -H "Authorization: Bearer $KEY" URL/PLATFORM/profile/NAME   # what it shows".
mapfile -t calls < <(sed -n "s#.*curl -si\? -H \"Authorization: Bearer [$]KEY\" $DEMO_URL\(/[^ ]*\) *\# \(.*\)#\1 \2#p" "$DEMO_LOG")
((${#calls[@]} >= 6)) || die "the demo's banner suggests ${#calls[@]} calls: $(cat "$DEMO_LOG")"
public=() throttled=""
for call in "${calls[@]}"; do
  path=${call%% *} shows=${call#* }
  lookup "$path"
  printf '%s  %s  (%s)\n' "$STATUS" "$path" "$shows"
  case $shows in
    "a public user"*) public+=("$path") ;;
    "a throttling platform"*) throttled=$path ;;
  esac
done
if ((${#public[@]} < 2)) || [[ -z $throttled ]]; then
  die "the banner names no public user of each platform, or no throttled name: ${calls[*]}"
fi
status=$(curl -s -o /dev/null -w '%{http_code}' "$DEMO_URL${public[0]}")
[[ $status == 401 ]] || die "a lookup without a key answered $status"
echo "401  ${public[0]} without a key"
for path in "${public[@]}"; do
  lookup "$path"
  expect 200 "$path again: a cache hit"
done

# In the revalidate window (TTL 2 s, window 2 s): answered at once, refreshed in the background.
sleep 2.5
for path in "${public[@]}"; do
  lookup "$path"
  expect 200 "$path after its TTL: $(header cache-status)"
done

# A moved page: the short-video stand-in serves its drifted page shape; a forced fetch of the
# public user fetches it and cannot read it: the page is captured and the lookup falls through
# to the embed, which answers (blame demotes the page once it is unreadable for several names).
standin=$(sed -n 's#.*short-video page moves: curl -s -X POST \(http://[0-9.:]*\)/__drift/on.*#\1#p' "$DEMO_LOG" | head -n1)
[[ -n $standin ]] || die "the demo's banner names no short-video stand-in to drift"
curl -sf -X POST "$standin/__drift/on" >/dev/null || die "POST $standin/__drift/on"
sv_public=$(printf '%s\n' "${public[@]}" | grep -m1 '^/short-video/') || die "no public short-video user"
lookup "$sv_public" -H 'Cache-Control: no-cache'
expect 200 "$sv_public while the page has moved: the embed answers, the page captured"
curl -sf -X POST "$standin/__drift/off" >/dev/null || die "POST $standin/__drift/off"
# The capture is written off the lookup's path: give it a moment.
for _ in $(seq 50); do compgen -G "$T/captures/*" >/dev/null && break; sleep 0.1; done
compgen -G "$T/captures/*" >/dev/null || die "the moved page was not captured in $T/captures"

# Redis paused for 1.5 s: calls time out (redis.timeout_ms), the replica goes on alone, and
# finds Redis again after it.
redis-cli -p "$redis_port" CLIENT PAUSE 1500 ALL >/dev/null
for _ in 1 2 3 4 5; do
  lookup "${public[0]}"
  expect 200 "${public[0]} while Redis is paused"
  sleep 0.2
done
sleep 1.5
for _ in $(seq 30); do
  lookup "${public[0]}"
  [[ $(rig_redis_up "${DEMO_URL##*:}") == 1 ]] && break
  sleep 0.2
done
[[ $(rig_redis_up "${DEMO_URL##*:}") == 1 ]] || die "the demo did not find Redis again after the pause"
echo "ok   Redis paused and found again: profile_lookup_redis_up is 1"

# Redis full (maxmemory reached under noeviction): answers are not shared, Redis stays in use.
redis-cli -p "$redis_port" CONFIG SET maxmemory 1 >/dev/null
for path in "${public[@]}"; do
  lookup "$path" -H 'Cache-Control: no-cache'
  expect 200 "$path while Redis is full"
done
redis-cli -p "$redis_port" CONFIG SET maxmemory 0 >/dev/null

# The name the stand-in always refuses is that name's (blame: refused by every source that reads
# other names), a 429 that opens no breaker.
lookup "$throttled"
expect 429 "$throttled: refused ($(header retry-after) s)"

# A stale answer: the public photo-share user's entry is past its TTL and window; the
# photo-share stand-in then throttles every request (its throttle switch), so lookups of other
# names are refused too, blame says the platform's, and the breaker opens (2 in a row: a canary
# round in between may reset the count, so until the gauge says open); the next fetch is
# refused and the old answer stands in.
ps_public=$(printf '%s\n' "${public[@]}" | grep -m1 '^/photo-share/') || die "no public photo-share user"
ps_standin=$(sed -n 's#.*photo-share [a-z]* moves: curl -s -X POST \(http://[0-9.:]*\)/__drift/on.*#\1#p' "$DEMO_LOG" | head -n1)
[[ -n $ps_standin ]] || die "the demo's banner names no photo-share stand-in"
lookup "$ps_public" -H 'Cache-Control: no-cache'
expect 200 "$ps_public, fetched"
sleep 4.5
breaker_open() {
  curl -s --max-time 5 "$DEMO_URL/metrics" |
    awk '$1 == "profile_lookup_breaker_state{platform=\"photo-share\"}" && $2 == 1 { found = 1 } END { exit !found }'
}
curl -sf -X POST "$ps_standin/__throttle/on" >/dev/null || die "POST $ps_standin/__throttle/on"
for n in $(seq 8); do
  lookup "/photo-share/profile/nobody.asked.$n"
  expect 429 "nobody.asked.$n while the platform throttles: $(header retry-after) s"
  breaker_open && break
done
breaker_open || die "the photo-share breaker did not open after 8 lookups the platform throttled"
curl -sf -X POST "$ps_standin/__throttle/off" >/dev/null || die "POST $ps_standin/__throttle/off"
lookup "$ps_public"
expect 200 "$ps_public with the breaker open: $(header cache-status)"
[[ $(header x-cache) == stale ]] || die "$ps_public was not answered stale: $HEADERS"

phase "canary round, last scrapes"
for _ in $(seq 150); do
  curl -s "$DEMO_URL/metrics" | grep -q '^profile_lookup_canary_verdict' && break
  sleep 0.2
done
sleep 3

phase "queries against Prometheus"
python3 scripts/dashboard/check.py --prometheus "$PROM" \
  --dashboard deploy/grafana/profile-lookup.json \
  --rules deploy/prometheus/alerts.yml --metrics-url "$DEMO_URL/metrics"
phase_end
printf '%s\n' "${PHASES[@]}"
echo "dashboard: every panel, variable and alert rule checked against Prometheus"
