# shellcheck shell=bash
# Headless Chromium against the demo: what docs-browser.sh and status-browser.sh share to check
# a page as a person sees it. Source after lib/rig.sh. Every browser flag keeps Chromium off the
# network: the pages load only from the demo on 127.0.0.1.
#   CHROMIUM  the browser (default: chromium, chromium-browser or google-chrome on PATH)

fail() { die "FAIL: $*"; }

# browser_demo NAME: finds Chromium (without one: skipped, or a failure under CI=true), then
# starts the demo on a free port with its own work folder NAME. Sets `chromium`, `work` and
# (through rig_demo) DEMO_URL.
browser_demo() {
  chromium="${CHROMIUM:-$(command -v chromium || command -v chromium-browser \
    || command -v google-chrome || command -v google-chrome-stable || true)}"
  [ -n "$chromium" ] || skip_unless_ci "chromium is not installed (apt-get install chromium)"
  rig_binary
  rig_workdir "$1"
  work="$T"
  rig_demo PROFILE_LOOKUP__LOG__LEVEL=warn
  echo "demo at $DEMO_URL; browser: $("$chromium" --version 2>/dev/null || echo "$chromium")"
}

# browser ARGS...: one headless run, with a fresh profile and nothing that would call home or
# fetch components; its stderr goes to $work/chromium.log.
browser() {
  local profile
  profile="$(mktemp -d "$work/profile.XXXXXX")"
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" "$@" 2>>"$work/chromium.log"
}

# dump_dom URL FILE BUDGET_MS: the DOM as rendered after BUDGET_MS of virtual time, into FILE.
dump_dom() {
  browser --virtual-time-budget="$3" --dump-dom "$1" >"$2" || fail "chromium could not render $1 (see below)
$(tail -20 "$work/chromium.log")"
}

# screenshot URL FILE BUDGET_MS WIDTH,HEIGHT: the page as rendered, as a PNG in FILE (its folder
# made); fails when nothing or an empty file was written.
screenshot() {
  mkdir -p "$(dirname "$2")"
  browser --virtual-time-budget="$3" --hide-scrollbars --window-size="$4" \
    --screenshot="$2" "$1" >/dev/null || fail "no screenshot of $1"
  [ -s "$2" ] || fail "the screenshot of $1 is empty"
  echo "ok: screenshot $2 ($(wc -c <"$2") bytes)"
}
