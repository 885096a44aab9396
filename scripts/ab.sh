#!/usr/bin/env bash
# Two release binaries compared on the same rig at the same time, so that the drift of a shared
# machine (10–15 % between runs an hour apart) cancels: per round, the same wrk run against A
# and against B, back to back, in alternating order. Prints each round and the medians of the
# service's CPU per request (utime + stime from /proc/PID/stat ÷ requests wrk completed).
#
#   bash scripts/ab.sh OLD_BINARY NEW_BINARY        # e.g. a release build of the old commit
#
# Paths: /healthz and a cached lookup (one name), and uncached lookups (cache off, the 64
# bench.user_NN pages rotating) against nginx serving the sample pages, all on 127.0.0.1.
# Knobs: AB_ROUNDS=10 AB_SECONDS=4. Needs wrk and nginx (apt-get when root).
set -euo pipefail

# shellcheck source=lib/rig.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/rig.sh"
ROUNDS=${AB_ROUNDS:-10}
SECS=${AB_SECONDS:-4}

(($# == 2)) || die "usage: bash scripts/ab.sh OLD_BINARY NEW_BINARY"
BINS=("$1" "$2")
for b in "${BINS[@]}"; do [[ -x $b ]] || die "not an executable: $b"; done
rig_install wrk=wrk nginx=nginx-light curl=curl
rig_examples sample_pages

rig_workdir ab
rig_clean_env

read -r UP P0 P1 Q0 Q1 < <(rig_free_ports 5)
rig_pages "$T/pages"
{
    rig_nginx_head "$T" auto
    cat <<EOF
    sendfile on;
    tcp_nopush on;
    server {
        listen 127.0.0.1:$UP;
        root $T/pages;
        access_log off;
        location / { try_files \$uri =404; }
    }
}
EOF
} >"$T/nginx.conf"
rig_nginx

KEY="ab-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
AUTH="Authorization: Bearer $KEY"
# start BINARY PORT EXTRA_TOML -> SVC_PID
start() {
    local up="http://127.0.0.1:$UP"
    rig_serve "$1" "svc-$2" "$2" "$(rig_service_toml "$2" "$KEY" "$up" "$up")"$'\n'"$3"
}
start "${BINS[0]}" "$P0" ""
CACHED=("$SVC_PID")
start "${BINS[1]}" "$P1" ""
CACHED+=("$SVC_PID")
start "${BINS[0]}" "$Q0" $'[cache]\nenabled = false'
NOCACHE=("$SVC_PID")
start "${BINS[1]}" "$Q1" $'[cache]\nenabled = false'
NOCACHE+=("$SVC_PID")
CPORT=("$P0" "$P1")
UPORT=("$Q0" "$Q1")

NAME=sunny.kitchen.lab
for p in "${CPORT[@]}"; do
    curl -sf -o /dev/null -H "$AUTH" "http://127.0.0.1:$p/short-video/profile/$NAME" ||
        die "the first lookup on port $p failed"
done
# cpu_per_request PID URL [wrk args] -> the service's CPU microseconds per completed request
cpu_per_request() {
    local pid=$1 url=$2 t0 t1 n
    shift 2
    t0=$(ticks "$pid")
    n=$(wrk -t2 -c32 -d"${SECS}s" -H "$AUTH" "$@" "$url" | awk '/requests in/ {print $1}')
    t1=$(ticks "$pid")
    awk -v t=$((t1 - t0)) -v k="$TCK" -v n="$n" 'BEGIN {printf "%.1f", t / k * 1e6 / n}'
}

log "A = ${BINS[0]}, B = ${BINS[1]}: $ROUNDS rounds of wrk -t2 -c32 -d${SECS}s per path and binary"
echo "round  healthz A / B (us)  cached A / B (us)  uncached A / B (us)"
declare -a HA HB CA CB UA UB
for r in $(seq "$ROUNDS"); do
    # Alternate which binary goes first, so neither always runs on a warmer (or busier) machine.
    if ((r % 2)); then order=(0 1); else order=(1 0); fi
    declare -A h=() c=() u=()
    for i in "${order[@]}"; do
        h[$i]=$(cpu_per_request "${CACHED[$i]}" "http://127.0.0.1:${CPORT[$i]}/healthz")
        c[$i]=$(cpu_per_request "${CACHED[$i]}" "http://127.0.0.1:${CPORT[$i]}/short-video/profile/$NAME")
        u[$i]=$(cpu_per_request "${NOCACHE[$i]}" "http://127.0.0.1:${UPORT[$i]}" -s "$RIG_ROTATE_LUA")
    done
    HA+=("${h[0]}") HB+=("${h[1]}") CA+=("${c[0]}") CB+=("${c[1]}") UA+=("${u[0]}") UB+=("${u[1]}")
    printf '%5d  %8s / %-8s  %7s / %-8s  %8s / %s\n' "$r" "${h[0]}" "${h[1]}" "${c[0]}" "${c[1]}" \
        "${u[0]}" "${u[1]}"
done

# median_ratio NUMERATORS DENOMINATORS (array names): the median of the per-round quotients
median_ratio() {
    local -n num=$1 den=$2
    local quotients=() i
    for i in "${!num[@]}"; do
        quotients+=("$(awk -v x="${num[$i]}" -v y="${den[$i]}" 'BEGIN {printf "%.4f", x / y}')")
    done
    median "${quotients[@]}"
}
ab_row() { printf '%-28s %10s %10s %10s\n' "$@"; }
echo
echo "medians over $ROUNDS rounds (service CPU us per request; ratios: median of per-round ratios)"
ab_row "" A B "B ÷ A"
ab_row "/healthz" "$(median "${HA[@]}")" "$(median "${HB[@]}")" \
    "$(median_ratio HB HA)"
ab_row "cached lookup" "$(median "${CA[@]}")" "$(median "${CB[@]}")" \
    "$(median_ratio CB CA)"
ab_row "cached ÷ /healthz" "$(median_ratio CA HA)" "$(median_ratio CB HB)" ""
ab_row "uncached lookup (64 names)" "$(median "${UA[@]}")" \
    "$(median "${UB[@]}")" "$(median_ratio UB UA)"
