# Sourced by scripts that need a running demo instance (schemathesis, the browser check).
#
#   start_demo [extra env assignments...]
#
# Starts `profile-lookup demo --listen 127.0.0.1:0` (the OS picks a free port) and reads the
# address and key it prints. Sets DEMO_URL, DEMO_KEY, DEMO_PID and DEMO_LOG; stops the demo on
# exit. The binary is $PROFILE_LOOKUP_BIN when set (CI builds it once for every script), else
# the release build, built here if missing or older than the sources.

demo_binary() {
  if [ -n "${PROFILE_LOOKUP_BIN:-}" ]; then
    [ -x "$PROFILE_LOOKUP_BIN" ] || { echo "PROFILE_LOOKUP_BIN=$PROFILE_LOOKUP_BIN is not an executable" >&2; return 1; }
    printf '%s\n' "$PROFILE_LOOKUP_BIN"
    return
  fi
  cargo build --release --locked --bin profile-lookup >&2
  printf '%s\n' "${CARGO_TARGET_DIR:-target}/release/profile-lookup"
}

start_demo() {
  local bin
  bin="$(demo_binary)"
  DEMO_LOG="$(mktemp)"
  env "$@" "$bin" demo --listen 127.0.0.1:0 >"$DEMO_LOG" 2>&1 &
  DEMO_PID=$!
  trap 'stop_demo' EXIT
  local line=""
  for _ in $(seq 1 100); do
    line="$(grep -m1 'Listening on http://' "$DEMO_LOG" || true)"
    [ -n "$line" ] && break
    kill -0 "$DEMO_PID" 2>/dev/null || break
    sleep 0.1
  done
  DEMO_URL="$(printf '%s\n' "$line" | sed -n 's/.*Listening on \(http:\/\/[^ ]*\).*/\1/p')"
  DEMO_KEY="$(printf '%s\n' "$line" | sed -n 's/.*API key: \([^ ]*\).*/\1/p')"
  if [ -z "$DEMO_URL" ] || [ -z "$DEMO_KEY" ]; then
    echo "the demo did not start (no 'Listening on ... API key: ...' line):" >&2
    cat "$DEMO_LOG" >&2
    return 1
  fi
  export DEMO_URL DEMO_KEY DEMO_PID DEMO_LOG
}

stop_demo() {
  if [ -n "${DEMO_PID:-}" ]; then
    kill "$DEMO_PID" 2>/dev/null || true
    wait "$DEMO_PID" 2>/dev/null || true
  fi
  [ -n "${DEMO_LOG:-}" ] && rm -f "$DEMO_LOG"
  DEMO_PID=""
}
