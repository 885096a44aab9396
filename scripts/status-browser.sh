#!/usr/bin/env bash
# /status in a real browser, with the demo's canary and its drift switch: starts the demo on a
# free port (the canary runs every 10 s against the sample upstreams), then
#   1. waits until every source reads ok, and checks what headless Chromium renders of /status:
#      a row per platform and source with its verdict, and no script, image, link or frame;
#   2. switches the short-video stand-in to its moved page shape (POST /__drift/on on the
#      stand-in, never the service), waits until the page is `changed` two rounds in a row,
#      checks that a lookup is then answered by the embed (x-source: embed) and that the
#      rendered page shows the source changed and asked last, and takes the screenshot;
#   3. switches the drift off and waits until the page reads ok again.
# The screenshot goes to STATUS_SCREENSHOT (default: target/status-page.png; the README's is
# refreshed with STATUS_SCREENSHOT=docs/images/status-page.png scripts/status-browser.sh).
# Needs chromium; without it the check is skipped, or fails under CI=true. Every browser flag
# keeps it off the network (the page loads only from the demo, and its CSP allows nothing else).
#   PROFILE_LOOKUP_BIN  the binary to run (default: the release build, built if needed)
#   CHROMIUM            the browser (default: chromium, chromium-browser or google-chrome on PATH)
set -euo pipefail
# shellcheck source=lib/rig.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/rig.sh"
# shellcheck source=lib/browser.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/browser.sh"
cd "$REPO"

browser_demo status-browser

# wait_status PYTHON_CONDITION SECONDS: polls /status (JSON) until the condition on `s` (the
# parsed document) and `src(platform, source)` holds.
wait_status() {
  python3 - "$DEMO_URL/status" "$1" "$2" <<'PY' || fail "/status never met: $1"
import json, sys, time, urllib.request
url, condition, limit = sys.argv[1], sys.argv[2], float(sys.argv[3])
deadline = time.monotonic() + limit
while True:
    s = json.load(urllib.request.urlopen(url, timeout=5))
    src = lambda p, n: next(x for x in s["sources"] if x["platform"] == p and x["source"] == n)
    if eval(condition):
        sys.exit(0)
    if time.monotonic() > deadline:
        print(json.dumps(s, indent=1), file=sys.stderr)
        sys.exit(1)
    time.sleep(0.3)
PY
}

# check_page FILE WORD...: the rendered page has a row per source, each WORD, and nothing that
# would load or run anything.
check_page() {
  local file=$1 word
  shift
  for row in "short-video</td><td>page" "short-video</td><td>embed" \
    "photo-share</td><td>json" "photo-share</td><td>page"; do
    grep -qF "<td>$row</td>" "$file" || fail "the rendered /status has no row $row"
  done
  for word in "$@"; do
    grep -qF "$word" "$file" || fail "the rendered /status does not show $word"
  done
  if grep -qiE '<(script|img|link|iframe|object|embed)[ >]|src=|href=' "$file"; then
    fail "the rendered /status loads or runs something: $(grep -oiE '<(script|img|link|iframe)[^>]*>|src=[^ ]*|href=[^ ]*' "$file" | head -3)"
  fi
}

# 1. Every source ok, as JSON and as rendered.
wait_status 'all(x["verdict"] == "ok" for x in s["sources"]) and len(s["sources"]) == 5' 30
dump_dom "$DEMO_URL/status" "$work/ok.html" 5000
check_page "$work/ok.html" 'class="v ok">ok<' "A round every 10 s"
echo "ok: /status renders every source ok, with no script or external asset"

# 2. The short-video page moves: changed, then asked last; the embed answers lookups.
standin="$(sed -n 's#.*short-video page moves: curl -s -X POST \(http://[0-9.:]*\)/__drift/on.*#\1#p' "$DEMO_LOG" | head -n1)"
[ -n "$standin" ] || fail "the demo's banner names no short-video stand-in to drift"
curl -sf -X POST "$standin/__drift/on" >/dev/null || fail "POST $standin/__drift/on"
wait_status 'src("short-video", "page")["demoted"] and src("short-video", "embed")["verdict"] == "ok"' 40
caller="tiny.baker_7"
source_header="$(curl -s -o /dev/null -D - -H "Authorization: Bearer $DEMO_KEY" \
  "$DEMO_URL/short-video/profile/$caller" | tr -d '\r' | sed -n 's/^x-source: //Ip')"
[ "$source_header" = embed ] || fail "a lookup while the page is changed was answered by '$source_header', not the embed"
dump_dom "$DEMO_URL/status" "$work/changed.html" 5000
check_page "$work/changed.html" 'class="v changed">changed<' "asked last (2 changed rounds)"
echo "ok: the moved page is changed and asked last; lookups are answered by the embed"

screenshot "$DEMO_URL/status" "${STATUS_SCREENSHOT:-${CARGO_TARGET_DIR:-target}/status-page.png}" \
  5000 1100,480

# 3. And back.
curl -sf -X POST "$standin/__drift/off" >/dev/null || fail "POST $standin/__drift/off"
wait_status 'src("short-video", "page")["verdict"] == "ok" and not src("short-video", "page")["demoted"]' 30
echo "ok: the page reads again and is asked in its place"
