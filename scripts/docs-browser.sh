#!/usr/bin/env bash
# /docs in a real browser: starts the demo on a free port, opens /docs in headless Chromium and
# checks what a person would see, from the rendered DOM:
#   1. both lookup operations, the Authorize button and the lock on each lookup, and, with each
#      lookup expanded (deep link), every status code the OpenAPI document lists for it;
#   2. "Authorize" takes the demo key (the dialog names the bearer scheme) and "Try it out" →
#      "Execute" on a sample user answers 200 from the service itself (DevTools protocol).
# Then takes a screenshot to DOCS_SCREENSHOT (default: target/docs-page.png; the README's is
# refreshed with DOCS_SCREENSHOT=docs/images/docs-page.png scripts/docs-browser.sh).
# Needs chromium (Debian's /usr/bin/chromium); without it the check is skipped, or fails under
# CI=true. Every browser flag keeps it off the network (the page loads only from the demo).
#   PROFILE_LOOKUP_BIN  the binary to run (default: the release build, built if needed)
#   CHROMIUM            the browser (default: chromium, chromium-browser or google-chrome on PATH)
set -euo pipefail
# shellcheck source=lib/rig.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/rig.sh"
# shellcheck source=lib/browser.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/browser.sh"
cd "$REPO"

browser_demo docs-browser

# 1. The page as rendered: the operations, the security scheme, and the statuses.
dump_dom "$DEMO_URL/docs/" "$work/page.html" 15000
for path in '/short-video/profile/{username}' '/photo-share/profile/{username}'; do
  grep -qF "data-path=\"$path\"" "$work/page.html" || fail "the page does not show $path"
done
grep -q 'class="btn authorize' "$work/page.html" || fail "no Authorize button: the bearer scheme is missing"
locks="$(grep -o 'class="authorization__btn' "$work/page.html" | wc -l)"
[ "$locks" -ge 2 ] || fail "the lookups do not show the lock of the bearer scheme ($locks locks)"

document="$work/openapi.json"
python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())' \
  "$DEMO_URL/openapi.json" >"$document"
for op in short_video_profile photo_share_profile; do
  dump_dom "$DEMO_URL/docs/#/profiles/$op" "$work/$op.html" 15000
  statuses="$(python3 - "$document" "$op" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for path, item in doc["paths"].items():
    if item.get("get", {}).get("operationId") == sys.argv[2]:
        print(" ".join(sorted(item["get"]["responses"])))
PY
)"
  [ -n "$statuses" ] || fail "no operation $op in /openapi.json"
  # The expanded operation's own block: from its id to the next operation.
  block="$(sed -n "/id=\"operations-profiles-$op\"/,\$p" "$work/$op.html")"
  for status in $statuses; do
    grep -q "data-code=\"$status\"" <<<"$block" || fail "$op: status $status is not shown"
  done
  echo "ok: $op shows statuses $statuses"
done
echo "ok: both lookups, the Authorize button and $locks locks are on the page"

# 2. Authorize and Try it out, as a person would click them (DevTools protocol).
username="$(sed -n 's#.*/short-video/profile/\([A-Za-z0-9._]*\)\( .*\)\{0,1\}$#\1#p' "$DEMO_LOG" | head -n1)"
[ -n "$username" ] || fail "no sample short-video user in the demo's banner"
profile="$(mktemp -d "$work/profile.XXXXXX")"
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --remote-debugging-address=127.0.0.1 --remote-debugging-port=0 \
  "$DEMO_URL/docs/" 2>>"$work/chromium.log" &
browser_pid=$!
PIDS+=("$browser_pid")
{
  printf 'const KEY = %s, USERNAME = %s;\n' \
    "$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$DEMO_KEY")" \
    "$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$username")"
  cat scripts/lib/docs-try-it-out.js
} >"$work/try.js"
python3 scripts/lib/devtools.py "$profile" "$DEMO_URL/docs/" "$work/try.js" >"$work/seen.json" \
  || fail "Authorize / Try it out in the browser"
rig_stop "$browser_pid"
python3 - "$work/seen.json" "$DEMO_URL" "$DEMO_KEY" "$username" <<'PY' || fail "Authorize / Try it out: see above"
import json, sys
seen, base, key, username = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], sys.argv[4]
problems = []
if "bearer" not in seen["authorizeDialog"] or "http, Bearer" not in seen["authorizeDialog"]:
    problems.append(f"the Authorize dialog does not name the bearer scheme: {seen['authorizeDialog']!r}")
if "locked" not in seen["authorizeButton"] or "unlocked" in seen["authorizeButton"]:
    problems.append(f"the key was not taken: Authorize button {seen['authorizeButton']!r}")
if seen["status"] != "200":
    problems.append(f"Try it out answered {seen['status']!r}: {seen['body'][:300]!r}")
if seen["requestUrl"] != f"{base}/short-video/profile/{username}":
    problems.append(f"Try it out called {seen['requestUrl']!r}, not this service")
if f"Authorization: Bearer {key}" not in seen["curl"]:
    problems.append(f"the request did not carry the key: {seen['curl']!r}")
if f'"uniqueId":"{username}"' not in seen["body"].replace(" ", "").replace("\n", ""):
    problems.append(f"the response is not {username}'s profile: {seen['body'][:300]!r}")
for p in problems:
    print("docs-browser:", p, file=sys.stderr)
sys.exit(1 if problems else 0)
PY
echo "ok: Authorize took the key; Try it out on $username answered 200 from $DEMO_URL"

# 3. The screenshot for the README.
screenshot "$DEMO_URL/docs/" "${DOCS_SCREENSHOT:-${CARGO_TARGET_DIR:-target}/docs-page.png}" \
  15000 1200,900
