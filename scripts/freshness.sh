#!/usr/bin/env bash
# Stale-while-revalidate and refresh-ahead, measured: the release binary against a loopback
# upstream that answers after 300 ms, 2,000 names drawn Zipf(1.0), ttl_seconds = 10, paced
# open-loop load at 500 lookups/s for 60 s (examples/freshness_load.rs plays both the upstream
# and the load). Each configuration runs from a cold cache with the same names in the same
# order: revalidation off (revalidate_seconds = 0, hot_hits = 0), then on with each window of
# FRESHNESS_WINDOWS ("auto" is the default, a fifth of the TTL; "60-cold" is a 60 s window
# without refresh-ahead); on one replica, then on three replicas sharing a redis-server (the
# load goes to them in turn).
#
#   bash scripts/freshness.sh        # about 9 minutes after the build
#
# Prints, side by side: p50 / p99 / p99.9 latency of lookups of names already seen (an earlier
# lookup of the name was answered before this one was sent), the share of lookups that waited
# on the upstream (Cache-Status `fwd=`), the share of lookups that were a name's first, and
# upstream requests per second; then PASS/MISS against the goals, for each "on" column:
#   seen p99 <= 5 ms; upstream req/s <= the same setup's with revalidation off;
#   waited <= first-seen + 1 %.
# In the fleet it also counts the refresh flights: how many fetched and how many took another
# replica's newer answer (one refresh per name per fleet). Exits non-zero when a goal is missed.
#
# Honours CARGO_TARGET_DIR and PROFILE_LOOKUP_BIN. Knobs: FRESHNESS_SECONDS=60
# FRESHNESS_RATE=500 FRESHNESS_NAMES=2000 FRESHNESS_DELAY_MS=300 FRESHNESS_TTL=10
# FRESHNESS_WINDOWS="auto 60 60-cold" FRESHNESS_SEED=26 FRESHNESS_KEEP_TMP=1 (keep the temp dir).
set -euo pipefail

# shellcheck source=lib/rig.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/rig.sh"
SECS=${FRESHNESS_SECONDS:-60}
RATE=${FRESHNESS_RATE:-500}
NAMES=${FRESHNESS_NAMES:-2000}
DELAY_MS=${FRESHNESS_DELAY_MS:-300}
TTL=${FRESHNESS_TTL:-10}
read -r -a WINDOWS <<<"${FRESHNESS_WINDOWS:-auto 60 60-cold}"
SEED=${FRESHNESS_SEED:-26}
KEY="fresh-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"

rig_install redis-server=redis-server curl=curl
rig_binary
log "building the load generator and upstream (examples/freshness_load.rs)"
rig_examples freshness_load
LOADGEN=$CARGO_TARGET_DIR/release/examples/freshness_load

rig_workdir freshness "${FRESHNESS_KEEP_TMP:-0}"
rig_clean_env
read -r REDIS_PORT R1 R2 R3 < <(rig_free_ports 4)
PORTS=("$R1" "$R2" "$R3")
rig_still_free "$REDIS_PORT" "$R1" "$R2" "$R3"

# --- the upstream: photo-share's profile JSON for any name, after DELAY_MS -----------------
"$LOADGEN" upstream "$DELAY_MS" >"$T/upstream.out" 2>&1 &
PIDS+=($!)
UP_PORT=""
for _ in $(seq 100); do
    UP_PORT=$(sed -n 's/^LISTENING \([0-9]*\)$/\1/p' "$T/upstream.out")
    [[ -n $UP_PORT ]] && break
    sleep 0.05
done
[[ -n $UP_PORT ]] || die "the upstream did not start: $(cat "$T/upstream.out")"
UP="http://127.0.0.1:$UP_PORT"
upstream_count() { curl -sf "$UP/count"; }
rig_redis "$REDIS_PORT"

# service_toml PORT MODE REDIS_PREFIX: one replica's config. MODE "off", or on with a window:
# "auto", seconds, or either followed by "-cold" for no refresh-ahead (hot_hits = 0);
# REDIS_PREFIX empty: no Redis. The outbound budget is 1000 requests/s (a refresh share of
# 200/s), far above what the misses need, with room for the 300 ms fetches at once.
service_toml() {
    local window=${2%-cold} hot=3
    [[ $2 == *-cold ]] && hot=0
    [[ $2 == off ]] && window=0 hot=0
    [[ $window == auto ]] && window='"auto"'
    cat <<EOF
[server]
listen = "127.0.0.1:$1"
max_in_flight = 4096
[auth]
api_keys = ["$KEY"]
[rate_limit]
per_key_per_minute = 1000000000
burst = 1000000
[photo_share]
base_url = "$UP"
requests_per_second = 1000
burst = 1000
max_concurrency = 512
[short_video]
base_url = "$UP"
[cache]
ttl_seconds = $TTL
revalidate_seconds = $window
hot_hits = $hot
refresh_share = 0.2
[log]
level = "warn"
EOF
    if [[ -n $3 ]]; then
        printf '[redis]\nurl = "redis://127.0.0.1:%s/0"\nkey_prefix = "%s"\n' "$REDIS_PORT" "$3"
    fi
}

# refresh_counts PORT...: "fetched taken-from-another-replica" refresh flights, summed.
refresh_counts() {
    local port
    for port in "$@"; do curl -s "http://127.0.0.1:$port/metrics"; done |
        awk '$1 ~ /^profile_lookup_cache_refreshes_total\{/ {
                if ($1 ~ /outcome="fleet"/) f += $2; else if ($1 ~ /outcome="(refreshed|gone)"/) r += $2
             } END { printf "%d %d", r, f }'
}

declare -A FIG=()
# run LABEL REPLICAS MODE: starts REPLICAS replicas in MODE (3: on Redis, with a prefix of its
# own), loads them, keeps the figures under LABEL, stops them.
run() {
    local label=$1 replicas=$2 mode=$3 prefix="" i urls=() pids=() ports=()
    ((replicas > 1)) && prefix="fresh-$label:"
    for ((i = 0; i < replicas; i++)); do
        rig_serve "$BIN" "$label-$i" "${PORTS[$i]}" "$(service_toml "${PORTS[$i]}" "$mode" "$prefix")"
        pids+=("$SVC_PID")
        ports+=("${PORTS[$i]}")
        urls+=("http://127.0.0.1:${PORTS[$i]}")
    done
    log "$label: $replicas replica(s), revalidation $mode, ${SECS}s at $RATE/s over $NAMES names"
    local before after line
    before=$(upstream_count)
    line=$("$LOADGEN" load "$KEY" "$RATE" "$SECS" "$NAMES" "$SEED" "${urls[@]}")
    after=$(upstream_count)
    echo "  $line" >&2
    FIG[$label.line]=$line
    FIG[$label.ups]=$(div "$((after - before))" "$SECS")
    FIG[$label.refresh]=$(refresh_counts "${ports[@]}")
    echo "  upstream requests: $((after - before)) (${FIG[$label.ups]}/s); refresh flights" \
        "fetched / took another replica's: ${FIG[$label.refresh]}" >&2
    for i in "${pids[@]}"; do rig_stop "$i"; done
}
field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<"${FIG[$1.line]}"; }
# label MODE: a column's heading.
label() {
    local window=${1%-cold} text
    [[ $1 == off ]] && { echo off; return; }
    if [[ $window == auto ]]; then text="on: auto window"; else text="on: ${window} s window"; fi
    [[ $1 == *-cold ]] && text="$text, no ahead"
    echo "$text"
}
pct() { awk -v v="$1" 'BEGIN { printf "%.2f %%", v * 100 }'; }

COLUMNS=(off "${WINDOWS[@]}")
for setup in single fleet; do
    replicas=1
    [[ $setup == fleet ]] && replicas=3
    for mode in "${COLUMNS[@]}"; do run "$setup-$mode" "$replicas" "$mode"; done
done

# --- the table -----------------------------------------------------------------------------
MISSED=0
verdict() { if cmp "$1" "$2" "$3"; then echo PASS; else echo MISS; fi; }
row() {
    local first=$1
    shift
    printf '%-44s' "$first"
    printf ' %26s' "$@"
    printf '\n'
}
echo
echo "freshness, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores: upstream ${DELAY_MS} ms," \
    "$NAMES names Zipf(1.0), ttl_seconds = $TTL, ${SECS}s at $RATE lookups/s (open loop), seed $SEED"
for setup in single fleet; do
    headers=()
    for mode in "${COLUMNS[@]}"; do
        headers+=("$(label "$mode")")
    done
    echo
    if [[ $setup == single ]]; then echo "one replica"; else echo "three replicas on one Redis"; fi
    row "figure" "${headers[@]}"
    cells() { # FIELD [FORMAT]
        local mode out=()
        for mode in "${COLUMNS[@]}"; do
            local v
            v=$(field "$setup-$mode" "$1")
            [[ ${2:-} == pct ]] && v=$(pct "$v")
            out+=("$v")
        done
        row "$3" "${out[@]}"
    }
    cells seen_p50_ms "" "seen names: p50 ms"
    cells seen_p99_ms "" "seen names: p99 ms"
    cells seen_p999_ms "" "seen names: p99.9 ms"
    cells waited pct "lookups that waited on the upstream"
    cells first_seen pct "lookups that were a name's first"
    cells seen_waited pct "seen-name lookups that waited"
    out=()
    for mode in "${COLUMNS[@]}"; do out+=("${FIG[$setup-$mode.ups]}"); done
    row "upstream requests/s" "${out[@]}"
    out=()
    for mode in "${COLUMNS[@]}"; do out+=("$(field "$setup-$mode" bad)"); done
    row "non-2xx answers" "${out[@]}"
    if [[ $setup == fleet ]]; then
        out=()
        for mode in "${COLUMNS[@]}"; do out+=("${FIG[$setup-$mode.refresh]/ / \/ }"); done
        row "refresh flights: fetched / another's" "${out[@]}"
    fi
    for mode in "${WINDOWS[@]}"; do
        label=$setup-$mode
        p99=$(field "$label" seen_p99_ms)
        waited=$(field "$label" waited)
        limit=$(awk -v f="$(field "$label" first_seen)" 'BEGIN { printf "%.4f", f + 0.01 }')
        fast=$(verdict "$p99" '<=' 5)
        calm=$(verdict "${FIG[$label.ups]}" '<=' "${FIG[$setup-off.ups]}")
        few=$(verdict "$waited" '<=' "$limit")
        echo "  $(label "$mode"): seen p99 $p99 ms <= 5: $fast;" \
            "upstream ${FIG[$label.ups]}/s <= off's ${FIG[$setup-off.ups]}/s: $calm;" \
            "waited $(pct "$waited") <= first-seen + 1 % ($(pct "$limit")): $few"
        for v in "$fast" "$calm" "$few"; do [[ $v == PASS ]] || MISSED=$((MISSED + 1)); done
    done
done
((MISSED == 0)) || exit 1
