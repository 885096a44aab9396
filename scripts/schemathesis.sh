#!/usr/bin/env bash
# Property-based contract testing: schemathesis (from PyPI) generates requests from the
# service's own /openapi.json and checks every response against it (all checks).
# Runs against the release binary in demo mode (a built-in loopback upstream): no network but
# PyPI for the first install. The demo listens on a port the OS picks (never a fixed one).
#   PROFILE_LOOKUP_BIN   the binary to run (default: the release build, built if needed)
#   SCHEMATHESIS_VENV    where schemathesis is installed (default: $CARGO_TARGET_DIR/schemathesis-venv)
#   SCHEMATHESIS_MAX_EXAMPLES  examples per operation (default 60)
set -euo pipefail
# shellcheck source=lib/rig.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/rig.sh"
cd "$REPO"

VENV="${SCHEMATHESIS_VENV:-$CARGO_TARGET_DIR/schemathesis-venv}"
if [ ! -x "$VENV/bin/st" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check 'schemathesis>=4,<5'
fi
venv_abs="$(cd "$VENV" && pwd)"

rig_binary
rig_workdir schemathesis
# The limiter is part of the contract, but a quota of 60/min would turn most generated
# requests into 429s; raise it so the lookups themselves are exercised.
rig_demo \
  PROFILE_LOOKUP__RATE_LIMIT__PER_KEY_PER_MINUTE=1000000 \
  PROFILE_LOOKUP__RATE_LIMIT__BURST=100000 \
  PROFILE_LOOKUP__LOG__LEVEL=warn
echo "demo at $DEMO_URL"

# schemathesis keeps its cache (.schemathesis/, .hypothesis/) in the working directory: run it
# from the rig's temporary one so nothing lands in the repository.
cd "$T"
"$venv_abs/bin/st" run "$DEMO_URL/openapi.json" \
  --checks all \
  --header "Authorization: Bearer $DEMO_KEY" \
  --max-examples "${SCHEMATHESIS_MAX_EXAMPLES:-60}" \
  --generation-deterministic \
  --request-timeout 30 \
  --workers 2
