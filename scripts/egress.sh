#!/usr/bin/env bash
# Proxies as operators buy them, on 127.0.0.1 (docs/performance.md, "Egress"):
#
#   1. a gateway: a loopback forward proxy that behaves like a provider's gateway (the session
#      id in the user name picks the exit, passed on in a header the platform stand-in trusts),
#      and a stand-in that blocks an exit after EGRESS_BLOCK_AFTER (20) requests; one gateway
#      configured, cache off, EGRESS_SECONDS (60) of photo-share lookups at EGRESS_RATE (10)/s
#      over EGRESS_NAMES (500) names. Prints the share of 200 answers, the gateway sessions
#      started and retired, and the gateway's rests. Goal: >= 99 % answer 200, no gateway rest.
#   2. a silent route: four fixed proxies (one answers 407, one never answers, one resets, one
#      works), EGRESS_SILENT_SECONDS (20) at the same rate. Goal: every lookup answers 200, and
#      the silent one rests after its first time-out: it is blamed only by the lookups that
#      met it before that time-out ended (at most the rate times upstream.timeout_ms, 10 s),
#      and rests at the end.
#
# Honours CARGO_TARGET_DIR and PROFILE_LOOKUP_BIN (e.g. an older build, for a "before" figure);
# EGRESS_KEEP_TMP=1 keeps the temp dir. Exits non-zero when a goal is missed.
set -euo pipefail
# shellcheck source=lib/rig.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/rig.sh"
cd "$REPO"

RATE=${EGRESS_RATE:-10}
SECS=${EGRESS_SECONDS:-60}
SILENT_SECS=${EGRESS_SILENT_SECONDS:-20}
NAMES=${EGRESS_NAMES:-500}
BLOCK_AFTER=${EGRESS_BLOCK_AFTER:-20}
KEY="egress-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"

rig_install curl=curl
rig_binary
log "building the load generator and the loopback platform and proxies"
rig_examples freshness_load egress_load
LOADGEN=$CARGO_TARGET_DIR/release/examples/freshness_load
RIG=$CARGO_TARGET_DIR/release/examples/egress_load
rig_workdir egress "${EGRESS_KEEP_TMP:-0}"
rig_clean_env

# start_rig BLOCK_AFTER: the stand-in and the proxies; sets PLATFORM GATEWAY P407 SILENT RESET
# FIXED (ports).
start_rig() {
    "$RIG" "$1" >"$T/rig-$1.out" 2>&1 &
    PIDS+=($!)
    local line=""
    for _ in $(seq 100); do
        line=$(sed -n 's/^LISTENING //p' "$T/rig-$1.out")
        [[ -n $line ]] && break
        sleep 0.05
    done
    [[ -n $line ]] || die "the rig did not start: $(cat "$T/rig-$1.out")"
    read -r PLATFORM GATEWAY P407 SILENT RESET FIXED <<<"$line"
}

# serve NAME PORT PROXIES: the service on PORT, photo-share on the stand-in through PROXIES
# (a TOML list), cache off.
serve() {
    local toml
    toml="$(rig_service_toml "$2" "$KEY" "http://127.0.0.1:$PLATFORM" "http://127.0.0.1:$PLATFORM")
[upstream]
proxies = $3
[cache]
enabled = false"
    rig_serve "$BIN" "$1" "$2" "$toml"
}

# metric PORT PATTERN: the sum of the samples whose series matches PATTERN (awk regex).
metric() {
    curl -s "http://127.0.0.1:$1/metrics" |
        awk -v p="$2" '$1 ~ p { s += $2 } END { printf "%d", s }'
}

field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<" $1"; }

read -r PORT_A PORT_B < <(rig_free_ports 2)

log "1. one gateway, an exit blocked after $BLOCK_AFTER requests: ${SECS}s at $RATE/s over $NAMES names"
start_rig "$BLOCK_AFTER"
serve gateway "$PORT_A" "[\"http://customer-load-session-{session}:pw@127.0.0.1:$GATEWAY\"]"
# SEED, then GAP 0: freshness_load's long-gap share is a freshness figure, not read here.
A=$("$LOADGEN" load "$KEY" "$RATE" "$SECS" "$NAMES" 1 0 "http://127.0.0.1:$PORT_A")
echo "  $A" >&2
a_total=$(field "$A" lookups)
a_bad=$(field "$A" bad)
a_ok=$(python3 -c "print(f'{100 * ($a_total - $a_bad) / $a_total:.2f}')")
a_started=$(metric "$PORT_A" '^profile_lookup_gateway_sessions_started_total[{].*photo-share')
a_blocked=$(metric "$PORT_A" '^profile_lookup_gateway_sessions_retired_total[{].*photo-share.*reason="blocked"')
a_worn=$(metric "$PORT_A" '^profile_lookup_gateway_sessions_retired_total[{].*photo-share.*reason="(used_up|aged)"')
a_rests=$(metric "$PORT_A" '^profile_lookup_gateway_rests_total[{].*photo-share')
a_resting=$(metric "$PORT_A" '^profile_lookup_proxy_resting[{].*photo-share')
a_stand_in=$(curl -s "http://127.0.0.1:$PLATFORM/stats")

log "2. four proxies (407, silent, reset, working): ${SILENT_SECS}s at $RATE/s"
start_rig 1000000000
serve silent "$PORT_B" "[\"http://127.0.0.1:$P407\", \"http://127.0.0.1:$SILENT\", \"http://127.0.0.1:$RESET\", \"http://127.0.0.1:$FIXED\"]"
B=$("$LOADGEN" load "$KEY" "$RATE" "$SILENT_SECS" "$NAMES" 2 0 "http://127.0.0.1:$PORT_B")
echo "  $B" >&2
b_total=$(field "$B" lookups)
b_bad=$(field "$B" bad)
b_silent_blamed=$(metric "$PORT_B" '^profile_lookup_proxy_blocks_total[{].*photo-share.*proxy="1"')
b_silent_resting=$(metric "$PORT_B" '^profile_lookup_proxy_resting[{].*photo-share.*proxy="1"')

pass() { rig_judge eval "$1"; }
echo
echo "| scenario | figure | value | goal | |"
echo "|---|---|---|---|---|"
echo "| gateway | lookups answered 200 | $((a_total - a_bad)) of $a_total ($a_ok %) | >= 99 % | $(pass "python3 -c 'import sys; sys.exit(0 if $a_ok >= 99 else 1)'") |"
echo "| gateway | sessions started / retired blocked / retired worn out | $a_started / $a_blocked / $a_worn | | |"
echo "| gateway | gateway rests (resting at the end) | $a_rests ($a_resting) | 0 | $(pass "[[ $a_rests == 0 && $a_resting == 0 ]]") |"
echo "| gateway | the stand-in saw | $a_stand_in | | |"
echo "| silent route | lookups answered 200 | $((b_total - b_bad)) of $b_total | all | $(pass "[[ $b_bad == 0 ]]") |"
max_blamed=$((RATE * 10))
echo "| silent route | lookups that met the silent proxy / resting at the end | $b_silent_blamed / $b_silent_resting | <= $max_blamed (sent before its first time-out ended) / 1 | $(pass "[[ $b_silent_blamed -ge 1 && $b_silent_blamed -le $max_blamed && $b_silent_resting == 1 ]]") |"
rig_exit_on_miss
