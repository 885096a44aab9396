#!/usr/bin/env bash
# Sources that heal themselves, measured: the release binary against the photo-share stand-in
# behind three loopback "proxies" (examples/sources_load.rs plays the platform and the load),
# cache off so that every lookup asks the platform. SOURCES_SECONDS of lookups at SOURCES_RATE
# a second over SOURCES_NAMES names; at SOURCES_RETIRE_AT s the JSON endpoint starts answering
# every name with 429 and an HTML "Please wait a few minutes" page (the page keeps answering);
# at SOURCES_RESTORE_AT s it answers again. The canary is off, so a demoted source is re-probed
# once a minute.
#
#   bash scripts/sources.sh        # about 2 minutes after the build
#
# Prints, for each phase (before, retired, restored): the share of 200 answers, upstream
# requests per lookup, proxy rests begun (profile_lookup_proxy_blocks_total), the most proxies
# resting in any sample (profile_lookup_proxy_resting, read every 250 ms), answers by source;
# then when /status showed the JSON demoted (after the retirement) and preferred again (after
# the restoration), and from when every 5 s window costs at most 1.1 requests per lookup;
# then PASS/MISS against the goals: after the retirement >= 99 % of lookups answer 200, at
# most 1.1 requests per lookup within 30 s, no proxy left resting while retired (the first
# lookup rests the routes it leaves until it learns the refusal is the source's, then lifts
# those rests), the JSON demoted; after
# the restoration, the JSON restored within one re-probe (60 s). Exits non-zero on a MISS.
#
# Honours CARGO_TARGET_DIR and PROFILE_LOOKUP_BIN. Knobs: SOURCES_SECONDS=100 SOURCES_RATE=20
# SOURCES_NAMES=200 SOURCES_RETIRE_AT=20 SOURCES_RESTORE_AT=60 SOURCES_KEEP_TMP=1.
set -euo pipefail

# shellcheck source=lib/rig.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/rig.sh"
SECS=${SOURCES_SECONDS:-100}
RATE=${SOURCES_RATE:-20}
NAMES=${SOURCES_NAMES:-200}
RETIRE_AT=${SOURCES_RETIRE_AT:-20}
RESTORE_AT=${SOURCES_RESTORE_AT:-60}
KEY="sources-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"

rig_install curl=curl
rig_binary
log "building the platform and the load (examples/sources_load.rs)"
rig_examples sources_load
LOADGEN=$CARGO_TARGET_DIR/release/examples/sources_load

rig_workdir sources "${SOURCES_KEEP_TMP:-0}"
rig_clean_env
read -r PORT < <(rig_free_ports 1)
rig_still_free "$PORT"

rig_upstream "$LOADGEN"
read -r UP_PORT P1 P2 P3 <<<"$UPSTREAM_LINE"
UP="http://127.0.0.1:$UP_PORT"

TOML="$(rig_service_toml "$PORT" "$KEY" "$UP" "$UP")
[upstream]
proxies = [\"http://127.0.0.1:$P1\", \"http://127.0.0.1:$P2\", \"http://127.0.0.1:$P3\"]
[cache]
enabled = false"
rig_serve "$BIN" service "$PORT" "$TOML"

log "${SECS}s at $RATE lookups/s over $NAMES names; JSON retired at ${RETIRE_AT}s, restored at ${RESTORE_AT}s"
OUT=$("$LOADGEN" load "$KEY" "$RATE" "$SECS" "$NAMES" "$RETIRE_AT" "$RESTORE_AT" \
    "http://127.0.0.1:$PORT" "$UP")

echo
echo "sources, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores: photo-share behind 3 proxies," \
    "cache off, ${SECS}s at $RATE lookups/s over $NAMES names"
echo "$OUT"

# --- the goals --------------------------------------------------------------------------------
field() { sed -n "s/^$1 \(.* \)\{0,1\}$2=\([^ ]*\).*/\2/p" <<<"$OUT" | head -1; }
retired() { sed -n "s/^PHASE retired .* $1=\([^ ]*\).*/\1/p" <<<"$OUT"; }
echo
ok=$(retired ok_share)
rests=$(retired proxy_rests)
resting=$(retired most_resting)
settled=$(field SOURCES at_most_1.1_from_s)
demoted=$(field SOURCES demoted_after_s)
restored=$(field SOURCES restored_after_s)
rig_goal "retired: >= 99 % answered 200 ($ok)" "$ok >= 0.99"
rig_goal "retired: <= 1.1 requests per lookup within 30 s (from ${settled} s)" \
    "\"$settled\" != \"never\" && $([[ $settled == never ]] && echo 999 || echo "$settled") <= 30"
rig_goal "retired: no proxy left resting (at most $resting in any sample; $rests rest(s) begun)" \
    "$resting == 0"
rig_goal "the JSON shown demoted in /status (after ${demoted} s)" "\"$demoted\" != \"never\""
rig_goal "restored within one re-probe, 60 s (after ${restored} s)" \
    "\"$restored\" != \"never\" && $([[ $restored == never ]] && echo 999 || echo "$restored") <= 60"
rig_exit_on_miss
