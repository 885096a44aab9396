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

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib/rig.sh
source "$REPO/scripts/lib/rig.sh"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target}
ROUNDS=${AB_ROUNDS:-10}
SECS=${AB_SECONDS:-4}
log() { printf '\n== %s\n' "$*" >&2; }
die() { printf 'ab.sh: %s\n' "$*" >&2; exit 1; }

(($# == 2)) || die "usage: bash scripts/ab.sh OLD_BINARY NEW_BINARY"
BINS=("$1" "$2")
for b in "${BINS[@]}"; do [[ -x $b ]] || die "not an executable: $b"; done
rig_install wrk=wrk nginx=nginx-light curl=curl
(cd "$REPO" && cargo build --release --quiet --example sample_pages)

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
nginx -e "$T/nginx-error.log" -p "$T" -c "$T/nginx.conf" &
PIDS+=($!)

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
cat >"$T/rotate.lua" <<'EOF'
local n = 0
function setup(thread) thread:set("first", n * 32); n = n + 1 end
function init(args) i = 0 end
function request()
  i = i + 1
  return wrk.format(nil, string.format("/short-video/profile/bench.user_%02d", first + i % 32))
end
EOF

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
TCK=$(getconf CLK_TCK)
# us_per PID URL [wrk args] -> the service's CPU microseconds per completed request
us_per() {
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
        h[$i]=$(us_per "${CACHED[$i]}" "http://127.0.0.1:${CPORT[$i]}/healthz")
        c[$i]=$(us_per "${CACHED[$i]}" "http://127.0.0.1:${CPORT[$i]}/short-video/profile/$NAME")
        u[$i]=$(us_per "${NOCACHE[$i]}" "http://127.0.0.1:${UPORT[$i]}" -s "$T/rotate.lua")
    done
    HA+=("${h[0]}") HB+=("${h[1]}") CA+=("${c[0]}") CB+=("${c[1]}") UA+=("${u[0]}") UB+=("${u[1]}")
    printf '%5d  %8s / %-8s  %7s / %-8s  %8s / %s\n' "$r" "${h[0]}" "${h[1]}" "${c[0]}" "${c[1]}" \
        "${u[0]}" "${u[1]}"
done

# median: of the numbers on stdin, one per line.
median() { sort -g | awk '{ v[NR] = $1 }
    END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# over NUMERATORS DENOMINATORS (array names) -> per-round quotients, one per line
over() {
    local -n num=$1 den=$2
    for i in "${!num[@]}"; do
        awk -v x="${num[$i]}" -v y="${den[$i]}" 'BEGIN {printf "%.4f\n", x / y}'
    done
}
row() { printf '%-28s %10s %10s %10s\n' "$@"; }
echo
echo "medians over $ROUNDS rounds (service CPU us per request; ratios: median of per-round ratios)"
row "" A B "B ÷ A"
row "/healthz" "$(printf '%s\n' "${HA[@]}" | median)" "$(printf '%s\n' "${HB[@]}" | median)" \
    "$(over HB HA | median)"
row "cached lookup" "$(printf '%s\n' "${CA[@]}" | median)" "$(printf '%s\n' "${CB[@]}" | median)" \
    "$(over CB CA | median)"
row "cached ÷ /healthz" "$(over CA HA | median)" "$(over CB HB | median)" ""
row "uncached lookup (64 names)" "$(printf '%s\n' "${UA[@]}" | median)" \
    "$(printf '%s\n' "${UB[@]}" | median)" "$(over UB UA | median)"
