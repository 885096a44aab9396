#!/usr/bin/env bash
# Where a lookup's CPU goes: `perf record -e cpu-clock -g` on the release binary under wrk, for
# the cached path (one name, memory hit), the uncached path (cache off, 64 distinct ~365 KB
# pages from nginx), with Redis the cached path of a fleet replica, and a replica without
# memory cache reading every answer from Redis (64 names). All on 127.0.0.1.
#
#   bash scripts/profile.sh [cached|uncached|fleet|redishit ...]     # default: all four
#
# Prints `perf report --no-children --stdio` (top lines) per path; keeps perf.data and the
# full reports in PROFILE_OUT (default /tmp/profile-lookup-perf). Knobs: PROFILE_SECONDS=8,
# PROFILE_TOP=40, PROFILE_CALL_GRAPH=fp (or dwarf: whole stacks through libc and memcpy, at
# the price of a 100 MB record; read them with `perf report -G -S SYMBOL`). Needs linux-perf (apt-get), and a kernel that lets root use perf.
set -euo pipefail

# shellcheck source=lib/rig.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/rig.sh"
SECS=${PROFILE_SECONDS:-8}
TOP=${PROFILE_TOP:-40}
OUT=${PROFILE_OUT:-/tmp/profile-lookup-perf}
PATHS=("$@")
((${#PATHS[@]})) || PATHS=(cached uncached fleet redishit)
KEY="prof-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
AUTH="Authorization: Bearer $KEY"
NAME=sunny.kitchen.lab

rig_install wrk=wrk nginx=nginx-light curl=curl perf=linux-perf redis-server=redis-server
rig_binary
rig_examples sample_pages
read -r UP_PORT SVC_PORT REDIS_PORT < <(rig_free_ports 3)
mkdir -p "$OUT"
rig_workdir prof
rig_clean_env

rig_pages "$T/pages"
{
    rig_nginx_head "$T" auto
    cat <<EOF
    sendfile on;
    server {
        listen 127.0.0.1:$UP_PORT;
        root $T/pages;
        access_log off;
        location / { try_files \$uri =404; }
    }
}
EOF
} >"$T/nginx.conf"
rig_nginx

# service EXTRA_TOML -> SVC_PID
service() {
    local up="http://127.0.0.1:$UP_PORT"
    rig_serve "$BIN" svc "$SVC_PORT" "$(rig_service_toml "$SVC_PORT" "$KEY" "$up" "$up")"$'\n'"$1"
}

# profile LABEL [wrk args + url]
profile() {
    local label=$1
    shift
    wrk -t2 -c32 -d"$((SECS + 2))s" "$@" >"$T/wrk-$label.txt" &
    local wrk_pid=$!
    sleep 1
    perf record -e cpu-clock --call-graph "${PROFILE_CALL_GRAPH:-fp}" -o "$OUT/$label.perf.data" -p "$SVC_PID" -- sleep "$SECS" \
        2>"$OUT/$label.record.log" >/dev/null
    wait "$wrk_pid"
    perf report -i "$OUT/$label.perf.data" --no-children --stdio 2>/dev/null \
        >"$OUT/$label.report.txt"
    echo "--- $label: $(awk '/Requests\/sec/ {print $2}' "$T/wrk-$label.txt") req/s" \
        "(wrk -t2 -c32, perf attached); top self time:"
    awk -v top="$TOP" '/^ +[0-9.]+%/ && n < top {print; n++}' "$OUT/$label.report.txt"
    echo "--- $label: self time by library"
    perf report -i "$OUT/$label.perf.data" --no-children --stdio --sort dso 2>/dev/null |
        awk '/^ +[0-9.]+%/ && n < 6 {print; n++}'
}

for path in "${PATHS[@]}"; do
    case $path in
    cached)
        service ""
        curl -sf -o /dev/null -H "$AUTH" "http://127.0.0.1:$SVC_PORT/short-video/profile/$NAME"
        profile cached -H "$AUTH" "http://127.0.0.1:$SVC_PORT/short-video/profile/$NAME"
        ;;
    uncached)
        service $'[cache]\nenabled = false'
        profile uncached -s "$RIG_ROTATE_LUA" -H "$AUTH" "http://127.0.0.1:$SVC_PORT"
        ;;
    fleet)
        [[ -n ${REDIS_PID:-} ]] || rig_redis "$REDIS_PORT"
        service $'[redis]\nurl = "redis://127.0.0.1:'"$REDIS_PORT"$'/0"'
        curl -sf -o /dev/null -H "$AUTH" "http://127.0.0.1:$SVC_PORT/short-video/profile/$NAME"
        profile fleet -H "$AUTH" "http://127.0.0.1:$SVC_PORT/short-video/profile/$NAME"
        ;;
    redishit)
        # A replica without memory cache: every answer is read from Redis (warmed first).
        [[ -n ${REDIS_PID:-} ]] || rig_redis "$REDIS_PORT"
        service $'[redis]\nurl = "redis://127.0.0.1:'"$REDIS_PORT"$'/0"\n[cache]\nmax_bytes = 0'
        for n in $(seq -w 0 63); do
            curl -sf -o /dev/null -H "$AUTH" "http://127.0.0.1:$SVC_PORT/short-video/profile/bench.user_$n"
        done
        profile redishit -s "$RIG_ROTATE_LUA" -H "$AUTH" "http://127.0.0.1:$SVC_PORT"
        ;;
    *) die "unknown path $path (cached, uncached, fleet, redishit)" ;;
    esac
    rig_stop "$SVC_PID"
done
