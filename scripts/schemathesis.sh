#!/usr/bin/env bash
# Property-based contract testing: schemathesis (from PyPI) generates requests from the
# service's own /openapi.json and checks every response against it (all checks).
# Runs against the release binary in demo mode (a built-in loopback upstream): no network.
set -euo pipefail
cd "$(dirname "$0")/.."

PORT="${SCHEMATHESIS_PORT:-18080}"
VENV="${SCHEMATHESIS_VENV:-target/schemathesis-venv}"
TARGET_DIR="${CARGO_TARGET_DIR:-target}"

if [ ! -x "$VENV/bin/st" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check 'schemathesis>=4,<5'
fi

cargo build --release --locked --bin profile-lookup
log="$(mktemp)"
# The limiter is part of the contract, but a quota of 60/min would turn most generated
# requests into 429s; raise it so the lookups themselves are exercised.
PROFILE_LOOKUP__RATE_LIMIT__PER_KEY_PER_MINUTE=1000000 \
PROFILE_LOOKUP__RATE_LIMIT__BURST=100000 \
PROFILE_LOOKUP__LOG__LEVEL=warn \
  "$TARGET_DIR/release/profile-lookup" demo --listen "127.0.0.1:$PORT" >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -f "$log"' EXIT

for _ in $(seq 1 100); do
  grep -q "API key:" "$log" && break
  sleep 0.1
done
key="$(sed -n 's/.*API key: \([^ ]*\).*/\1/p' "$log" | head -n1)"
[ -n "$key" ] || { echo "demo did not start:"; cat "$log"; exit 1; }

"$VENV/bin/st" run "http://127.0.0.1:$PORT/openapi.json" \
  --checks all \
  --header "Authorization: Bearer $key" \
  --max-examples "${SCHEMATHESIS_MAX_EXAMPLES:-60}" \
  --generation-deterministic \
  --request-timeout 30 \
  --workers 2
