#!/usr/bin/env bash
# The service's load figures, side by side in one run, all on 127.0.0.1: the release binary
# against nginx serving the invented sample pages, measured with wrk, then a soak. Prints a
# summary table (figure, target, PASS/MISS), then the cost-per-lookup table, at the end; exits
# non-zero when a goal is missed.
#
#   bash scripts/load.sh                 # needs root (or sudo) only to apt-get wrk/nginx
#
# Honours CARGO_TARGET_DIR (default: the repo's target/) and PROFILE_LOOKUP_BIN. Knobs:
#   LOAD_SECONDS=10 LOAD_ROUNDS=3 LOAD_THREADS=2 LOAD_CONNECTIONS=32   the wrk comparisons
#   SOAK_REQUESTS=200000 SOAK_MAX_SECONDS=300                          the soak
#   ONEFLIGHT_CALLERS=200  LOAD_KEEP_TMP=1 (keep the temp dir)
# docs/performance.md says what each figure means and how it is measured.
set -euo pipefail

# shellcheck source=lib/rig.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/rig.sh"
SECONDS_PER_RUN=${LOAD_SECONDS:-10}
ROUNDS=${LOAD_ROUNDS:-3}
THREADS=${LOAD_THREADS:-2}
CONNS=${LOAD_CONNECTIONS:-32}
SOAK_REQUESTS=${SOAK_REQUESTS:-200000}
SOAK_MAX_SECONDS=${SOAK_MAX_SECONDS:-300}
CALLERS=${ONEFLIGHT_CALLERS:-200}
# Every port is one the OS picked as free just now (seven sockets held at once, so they are
# distinct): the machine is shared, and a fixed port fails when something else holds it.
read -r NGINX_PORT SLOW_PORT PORT_CACHED PORT_NOCACHE PORT_RSS PORT_FLIGHT PORT_SOAK \
    REDIS_PORT PORT_FLEET PORT_NOMEM PORT_UNCACHED < <(rig_free_ports 11)
# NGINX_PORT: the loopback upstream (both platforms); SLOW_PORT: the same pages at 100 KB/s,
# for the one-flight check; PORT_CACHED: healthz vs cached lookup; PORT_NOCACHE:
# cache.enabled = false; PORT_RSS, PORT_FLIGHT, PORT_SOAK: fresh instances for the oversized
# bodies, the one-flight check and the soak.

LOOKUP_NAME=sunny.kitchen.lab   # the ~365 KB short-video sample page
KEY="load-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
AUTH="Authorization: Bearer $KEY"

# --- tools, build ------------------------------------------------------------------------
rig_install wrk=wrk nginx=nginx-light curl=curl redis-server=redis-server redis-cli=redis-tools
rig_binary
rig_examples sample_pages paced_load
LOADAVG_START=$(cut -d" " -f1-3 /proc/loadavg)

# --- temp dir, cleanup -------------------------------------------------------------------
rig_workdir load "${LOAD_KEEP_TMP:-0}"

rig_still_free "$NGINX_PORT" "$SLOW_PORT" "$PORT_CACHED" "$PORT_NOCACHE" "$PORT_RSS" \
    "$PORT_FLIGHT" "$PORT_SOAK" "$REDIS_PORT" "$PORT_FLEET" "$PORT_NOMEM" "$PORT_UNCACHED"

log "writing sample pages"
rig_pages "$T/pages"

# --- nginx -------------------------------------------------------------------------------
{
    rig_nginx_head "$T" auto
    cat <<EOF
    sendfile on;
    tcp_nopush on;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        root $T/pages;
        access_log $T/upstream-access.log names;
        location = /api/v1/users/web_profile_info/ {
            default_type "application/json; charset=utf-8";
            if (\$arg_username = "throttled.demo") { return 429; }
            try_files /api/\$arg_username.json =404;
        }
        location = /@throttled.demo { return 429; }
        # The cached lookup's own body as a static file: what an HTTP server's answer costs.
        location = /cached-body.json { access_log off; default_type application/json; }
        location ~ ^/@big\.body { rewrite ^ /big.bin break; }
        location ~ ^/@gzip\.bomb {
            add_header Content-Encoding gzip always;
            rewrite ^ /bomb.gz break;
        }
        location / { try_files \$uri =404; }
    }
    server {
        listen 127.0.0.1:$SLOW_PORT;
        root $T/pages;
        limit_rate 100k;
        access_log $T/slow-access.log names;
        location / { try_files \$uri =404; }
    }
}
EOF
} >"$T/nginx.conf"
rig_nginx
UP="http://127.0.0.1:$NGINX_PORT"
for _ in $(seq 50); do
    code=$(curl -s -o /dev/null -w '%{http_code}' "$UP/@$LOOKUP_NAME" || true)
    [[ $code == 200 ]] && break
    sleep 0.1
done
[[ $code == 200 ]] || die "nginx does not serve the sample page ($code)"

# --- service instances -------------------------------------------------------------------
# The service reads PROFILE_LOOKUP__* and RUST_LOG; none may leak in from the caller.
rig_clean_env

# start_service NAME PORT SHORT_VIDEO_URL EXTRA_TOML -> sets SVC_PID
start_service() {
    rig_serve "$BIN" "$1" "$2" "$(rig_service_toml "$2" "$KEY" "$3" "$UP")"$'\n'"$4"
}

hwm_mib() { awk '/^VmHWM/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }
rss_mib() { awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }
lines() { if [[ -f $1 ]]; then wc -l <"$1"; else echo 0; fi; }
# CPU time (user + system, clock ticks) of nginx, master and workers (ticks: lib/common.sh).
nginx_ticks() {
    local master n=0 pid
    master=$(cat "$T/nginx.pid")
    for pid in "$master" $(ps -o pid= --ppid "$master"); do n=$((n + $(ticks "$pid"))); done
    echo "$n"
}

# run_wrk LABEL SVC_PID URL [wrk args...] -> sets RPS (req/s); not in a subshell, so the
# totals below survive. Full output in $T/wrk-LABEL.txt;
# accumulates per LABEL: requests, non-2xx/socket errors, CPU of the service, nginx and wrk.
declare -A WRK_BAD=() REQS=() CPU_SVC=() CPU_NGX=() CPU_WRK=()
run_wrk() {
    local label=$1 svc=$2 url=$3
    shift 3
    local out="$T/wrk-$label.txt" s0 n0 s1 n1 wrk_cpu
    s0=$(ticks "$svc")
    n0=$(nginx_ticks)
    TIMEFORMAT='%U %S'
    { time wrk -t"$THREADS" -c"$CONNS" -d"${SECONDS_PER_RUN}s" --timeout 10s "$@" "$url" \
        >"$out"; } 2>"$T/time-$label.txt"
    s1=$(ticks "$svc")
    n1=$(nginx_ticks)
    wrk_cpu=$(awk '{print $1 + $2}' "$T/time-$label.txt")
    local bad
    bad=$(awk '/Non-2xx/ {n += $NF} /Socket errors/ {gsub(",", ""); n += $4 + $6 + $8 + $10}
        END {print n + 0}' "$out")
    WRK_BAD[$label]=$((${WRK_BAD[$label]:-0} + bad))
    REQS[$label]=$((${REQS[$label]:-0} + $(awk '/requests in/ {print $1}' "$out")))
    CPU_SVC[$label]=$((${CPU_SVC[$label]:-0} + s1 - s0))
    CPU_NGX[$label]=$((${CPU_NGX[$label]:-0} + n1 - n0))
    CPU_WRK[$label]=$(awk -v a="${CPU_WRK[$label]:-0}" -v b="$wrk_cpu" 'BEGIN {print a + b}')
    RPS=$(awk '/Requests\/sec/ {print $2}' "$out")
    # This run alone, for per-round CPU ratios: microseconds per request of the service, nginx.
    LAST_REQS=$(awk '/requests in/ {print $1}' "$out")
    LAST_SVC_US=$(awk -v t=$((s1 - s0)) -v k="$TCK" -v n="$LAST_REQS" 'BEGIN {printf "%.2f", t / k * 1e6 / n}')
    LAST_NGX_US=$(awk -v t=$((n1 - n0)) -v k="$TCK" -v n="$LAST_REQS" 'BEGIN {printf "%.2f", t / k * 1e6 / n}')
}
# us_per LABEL svc|ngx|wrk -> CPU microseconds per request
us_per() {
    local t
    case $2 in
    svc) t=$(awk -v t="${CPU_SVC[$1]}" -v k="$TCK" 'BEGIN {print t / k}') ;;
    ngx) t=$(awk -v t="${CPU_NGX[$1]}" -v k="$TCK" 'BEGIN {print t / k}') ;;
    wrk) t=${CPU_WRK[$1]} ;;
    esac
    awk -v t="$t" -v n="${REQS[$1]}" 'BEGIN { printf "%.1f", t * 1e6 / n }'
}

# Requests spread over the 64 bench.user_NN pages (lib/rotate.lua): each wrk thread cycles over
# its own slice, so two connections rarely ask for one name at once (which would coalesce).
export ROTATE_THREADS=$THREADS

start_service cached "$PORT_CACHED" "$UP" ""
PID_CACHED=$SVC_PID
start_service nocache "$PORT_NOCACHE" "$UP" $'[cache]\nenabled = false'
PID_NOCACHE=$SVC_PID
S1="http://127.0.0.1:$PORT_CACHED"
S2="http://127.0.0.1:$PORT_NOCACHE"

code=$(curl -s -o "$T/first.json" -w '%{http_code}' -H "$AUTH" "$S1/short-video/profile/$LOOKUP_NAME")
[[ $code == 200 ]] || die "lookup of $LOOKUP_NAME answered $code: $(cat "$T/first.json")"
xcache=$(curl -s -D - -o /dev/null -H "$AUTH" "$S1/short-video/profile/$LOOKUP_NAME" |
    awk 'tolower($1) == "x-cache:" {print $2}' | tr -d '\r')
[[ $xcache == hit ]] || die "second lookup was not a cache hit (x-cache: $xcache)"
cp "$T/first.json" "$T/pages/cached-body.json"

# --- 1 and 2: throughput ratios ----------------------------------------------------------
log "1. /healthz vs cached lookup; 2. nginx direct vs cache-off lookup ($ROUNDS rounds of" \
    "-t$THREADS -c$CONNS -d${SECONDS_PER_RUN}s, alternating)"
H=() C=() N=() U=() ND=() UD=() R1S=() R2S=() CPU1S=() CPU2S=()
FETCH_SAME=0 FETCH_DISTINCT=0
for round in $(seq "$ROUNDS"); do
    run_wrk healthz "$PID_CACHED" "$S1/healthz"
    H+=("$RPS")
    healthz_us=$LAST_SVC_US
    run_wrk cached "$PID_CACHED" "$S1/short-video/profile/$LOOKUP_NAME" -H "$AUTH"
    C+=("$RPS")
    CPU1S+=("$(div "$LAST_SVC_US" "$healthz_us")")
    run_wrk nginxbody - "$UP/cached-body.json"
    run_wrk nginx - "$UP/@$LOOKUP_NAME"
    N+=("$RPS")
    before=$(lines "$T/upstream-access.log")
    run_wrk nocache "$PID_NOCACHE" "$S2/short-video/profile/$LOOKUP_NAME" -H "$AUTH"
    U+=("$RPS")
    after=$(lines "$T/upstream-access.log")
    FETCH_SAME=$((FETCH_SAME + after - before))
    ROTATE_PREFIX=/@bench.user_ run_wrk nginx64 - "$UP" -s "$RIG_ROTATE_LUA"
    ND+=("$RPS")
    nginx_page_us=$LAST_NGX_US
    before=$(lines "$T/upstream-access.log")
    ROTATE_PREFIX=/short-video/profile/bench.user_ run_wrk nocache64 "$PID_NOCACHE" \
        "$S2" -s "$RIG_ROTATE_LUA" -H "$AUTH"
    UD+=("$RPS")
    CPU2S+=("$(div "$LAST_SVC_US" "$nginx_page_us")")
    after=$(lines "$T/upstream-access.log")
    FETCH_DISTINCT=$((FETCH_DISTINCT + after - before))
    R1S+=("$(div "${C[-1]}" "${H[-1]}")")
    R2S+=("$(div "${UD[-1]}" "${ND[-1]}")")
    echo "  round $round: healthz ${H[-1]}/s, cached ${C[-1]}/s | one page: nginx ${N[-1]}/s," \
        "cache-off ${U[-1]}/s | 64 pages: nginx ${ND[-1]}/s, cache-off ${UD[-1]}/s" \
        "| ratios ${R1S[-1]}, ${R2S[-1]} | CPU: cached/healthz ${CPU1S[-1]}," \
        "cache-off/nginx ${CPU2S[-1]}" >&2
done
HEALTHZ=$(mean "${H[@]}")
CACHED=$(mean "${C[@]}")
NGINX_RPS=$(mean "${N[@]}")
NOCACHE=$(mean "${U[@]}")
NGINX64=$(mean "${ND[@]}")
NOCACHE64=$(mean "${UD[@]}")
R1=$(median "${R1S[@]}")
R1_CPU=$(div "$(us_per healthz svc)" "$(us_per cached svc)")
R2_SAME=$(div "$NOCACHE" "$NGINX_RPS")
R2=$(median "${R2S[@]}")
FETCH_PER_SAME=$(div "$FETCH_SAME" "${REQS[nocache]}")
FETCH_PER_DISTINCT=$(div "$FETCH_DISTINCT" "${REQS[nocache64]}")
HWM_NOCACHE=$(hwm_mib "$PID_NOCACHE")
HWM_CACHED=$(hwm_mib "$PID_CACHED")
rig_stop "$PID_NOCACHE"

# --- 6: fleet (Redis) and latency --------------------------------------------------------
# The cached instance above is "a replica with Redis off"; FLEET is the same configuration
# with [redis], NOMEM that with no memory cache (every answer read from Redis).
log "6. fleet: cached lookups with Redis on vs off; Redis hit vs memory hit; Redis round" \
    "trips per request; latency at half the peak rate"
rig_redis "$REDIS_PORT"
PID_REDIS=$REDIS_PID
REDIS_TOML=$'[redis]\nurl = "redis://127.0.0.1:'"$REDIS_PORT"$'/0"\nkey_prefix = "load:"'
start_service fleet "$PORT_FLEET" "$UP" "$REDIS_TOML"
PID_FLEET=$SVC_PID
start_service nomem "$PORT_NOMEM" "$UP" "$REDIS_TOML"$'\n[cache]\nmax_bytes = 0'
PID_NOMEM=$SVC_PID
S6="http://127.0.0.1:$PORT_FLEET"
S7="http://127.0.0.1:$PORT_NOMEM"
# Warm: the one name in both replicas' memory, the 64 names in the fleet's (and Redis).
curl -sf -o /dev/null -H "$AUTH" "$S6/short-video/profile/$LOOKUP_NAME"
for n in $(seq -w 0 63); do
    curl -sf -o /dev/null -H "$AUTH" "$S6/short-video/profile/bench.user_$n"
done
for n in $(seq -w 0 63); do # the Redis-hit replica's NOSCRIPT loads, once
    curl -sf -o /dev/null -H "$AUTH" "$S7/short-video/profile/bench.user_$n"
done
FR=() FO=() MH=() RH=() R3S=() R4S=()
for round in $(seq "$ROUNDS"); do
    run_wrk fleet_off "$PID_CACHED" "$S1/short-video/profile/$LOOKUP_NAME" -H "$AUTH"
    FO+=("$RPS")
    run_wrk fleet_on "$PID_FLEET" "$S6/short-video/profile/$LOOKUP_NAME" -H "$AUTH"
    FR+=("$RPS")
    ROTATE_PREFIX=/short-video/profile/bench.user_ run_wrk memhit "$PID_FLEET" "$S6" \
        -s "$RIG_ROTATE_LUA" -H "$AUTH"
    MH+=("$RPS")
    ROTATE_PREFIX=/short-video/profile/bench.user_ run_wrk redishit "$PID_NOMEM" "$S7" \
        -s "$RIG_ROTATE_LUA" -H "$AUTH"
    RH+=("$RPS")
    R3S+=("$(div "${FR[-1]}" "${FO[-1]}")")
    R4S+=("$(div "${RH[-1]}" "${MH[-1]}")")
    echo "  round $round: cached Redis off ${FO[-1]}/s, on ${FR[-1]}/s | 64 names: memory hit" \
        "${MH[-1]}/s, Redis hit ${RH[-1]}/s | ratios ${R3S[-1]}, ${R4S[-1]}" >&2
done
R3=$(median "${R3S[@]}")
R4=$(median "${R4S[@]}")
FLEET_ON=$(mean "${FR[@]}")
FLEET_OFF=$(mean "${FO[@]}")

# Round trips: every command a replica sends, counted with MONITOR (commands a script runs
# show as "lua" and are not round trips; the once-a-second PING is left out), over one
# connection so that no two requests share a read.
# round_trips LABEL URL [wrk args] -> RT (commands per completed request)
round_trips() {
    local label=$1 url=$2
    shift 2
    redis-cli -p "$REDIS_PORT" monitor >"$T/monitor-$label.txt" 2>/dev/null &
    local mon=$!
    sleep 0.3
    wrk -t1 -c1 -d2s "$@" "$url" >"$T/wrk-rt-$label.txt"
    sleep 0.3
    kill "$mon" 2>/dev/null || true
    wait "$mon" 2>/dev/null || true
    local reqs cmds
    reqs=$(awk '/requests in/ {print $1}' "$T/wrk-rt-$label.txt")
    cmds=$(grep -E '\[[0-9]+ 127\.0\.0\.1:[0-9]+\]' "$T/monitor-$label.txt" |
        grep -vc '"PING"' || true)
    RT=$(div "$cmds" "$reqs")
    echo "  round trips, $label: $cmds commands for $reqs requests" >&2
}
round_trips memory "$S6/short-video/profile/$LOOKUP_NAME" -H "$AUTH"
RT_MEMORY=$RT
ROTATE_THREADS=1 ROTATE_PREFIX=/short-video/profile/bench.user_ round_trips redis "$S7" \
    -s "$RIG_ROTATE_LUA" -H "$AUTH"
RT_REDIS=$RT
# Uncached: a fresh replica on a prefix nothing is stored under, each of the 64 names once.
start_service uncached "$PORT_UNCACHED" "$UP" "${REDIS_TOML/load:/fresh:}"
PID_UNCACHED=$SVC_PID
redis-cli -p "$REDIS_PORT" monitor >"$T/monitor-uncached.txt" 2>/dev/null &
mon=$!
sleep 0.3
for n in $(seq -w 0 63); do
    curl -sf -o /dev/null -H "$AUTH" "http://127.0.0.1:$PORT_UNCACHED/short-video/profile/bench.user_$n"
done
sleep 0.3
kill "$mon" 2>/dev/null || true
wait "$mon" 2>/dev/null || true
uncached_cmds=$(grep -E '\[[0-9]+ 127\.0\.0\.1:[0-9]+\]' "$T/monitor-uncached.txt" |
    grep -v '"PING"' | grep -vciE '"(SCRIPT|EVAL)"' || true)
RT_UNCACHED=$(div "$uncached_cmds" 64)
RT_UNCACHED_KINDS=$(grep -E '\[[0-9]+ 127\.0\.0\.1:[0-9]+\]' "$T/monitor-uncached.txt" |
    grep -v '"PING"' | awk '{print toupper($4)}' | tr -d '"' | sort | uniq -c |
    awk '{printf "%s%s x%d", sep, $2, $1; sep = ", "}')
echo "  round trips, uncached: $uncached_cmds commands for 64 lookups ($RT_UNCACHED_KINDS;" \
    "first-use script loads left out)" >&2
rig_stop "$PID_UNCACHED"

# Latency at half the peak rate, open loop (examples/paced_load.rs), one name, cached.
HALF=$(awk -v r="$FLEET_OFF" 'BEGIN {printf "%.0f", r / 2}')
HALF_ON=$(awk -v r="$FLEET_ON" 'BEGIN {printf "%.0f", r / 2}')
paced() { # URL RATE -> the PACED line
    "$CARGO_TARGET_DIR/release/examples/paced_load" "$1" "$2" "$SECONDS_PER_RUN" "$CONNS" \
        "$AUTH" | grep '^PACED'
}
PACED_OFF=$(paced "$S1/short-video/profile/$LOOKUP_NAME" "$HALF")
PACED_ON=$(paced "$S6/short-video/profile/$LOOKUP_NAME" "$HALF_ON")
echo "  Redis off, $HALF/s: $PACED_OFF" >&2
echo "  Redis on, $HALF_ON/s: $PACED_ON" >&2
pfield() { tr ' ' '\n' <<<"$1" | awk -F= -v k="$2" '$1 == k {print $2}'; }
HWM_FLEET=$(hwm_mib "$PID_FLEET")
rig_stop "$PID_FLEET"
rig_stop "$PID_NOMEM"
rig_stop "$PID_REDIS"
# The cached instance is done; stop it so the next phases have the CPU.
rig_stop "$PID_CACHED"

# --- 3: oversized upstream bodies --------------------------------------------------------
log "3. oversized bodies: 64 MiB and a gzip bomb (1 MiB -> 1 GiB), on a fresh instance"
start_service rss "$PORT_RSS" "$UP" ""
PID_RSS=$SVC_PID
S3="http://127.0.0.1:$PORT_RSS"
HWM_RSS_START=$(hwm_mib "$PID_RSS")
oversized() { # NAME -> "status seconds code"
    curl -s -o "$T/over-$1.json" -w '%{http_code} %{time_total}' --max-time 30 \
        -H "$AUTH" "$S3/short-video/profile/$1" || true
    printf ' %s\n' "$(grep -o '"code":"[a-z_]*"' "$T/over-$1.json" | cut -d'"' -f4 || true)"
}
read -r BIG_STATUS BIG_SECONDS BIG_CODE < <(oversized big.body)
read -r BOMB_STATUS BOMB_SECONDS BOMB_CODE < <(oversized gzip.bomb)
HWM_RSS_SEQ=$(hwm_mib "$PID_RSS")
echo "  64 MiB body: $BIG_STATUS $BIG_CODE in ${BIG_SECONDS}s; gzip bomb: $BOMB_STATUS" \
    "$BOMB_CODE in ${BOMB_SECONDS}s; VmHWM ${HWM_RSS_START} -> ${HWM_RSS_SEQ} MiB" >&2
# Beyond the target: 16 of each at once, distinct names so nothing coalesces.
burst_pids=()
for i in $(seq 16); do
    for n in big.body gzip.bomb; do
        curl -s -o /dev/null -w '%{http_code}\n' --max-time 30 -H "$AUTH" \
            "$S3/short-video/profile/$n$i" >>"$T/burst-status.txt" &
        burst_pids+=($!)
    done
done
wait "${burst_pids[@]}" || true
BURST_500=$(grep -c '^500$' "$T/burst-status.txt" || true)
HWM_RSS_BURST=$(hwm_mib "$PID_RSS")
echo "  32 concurrent oversized lookups: $BURST_500/32 answered 500; VmHWM $HWM_RSS_BURST MiB" >&2
rig_stop "$PID_RSS"

# --- 4: one flight -----------------------------------------------------------------------
log "4. one flight: $CALLERS concurrent callers of one uncached name, upstream at 100 KB/s"
start_service flight "$PORT_FLIGHT" "http://127.0.0.1:$SLOW_PORT" ""
PID_FLIGHT=$SVC_PID
flight_pids=()
for _ in $(seq "$CALLERS"); do
    curl -s -o /dev/null -w '%{http_code} %{time_total}\n' --max-time 30 -H "$AUTH" \
        "http://127.0.0.1:$PORT_FLIGHT/short-video/profile/$LOOKUP_NAME" >>"$T/flight.txt" &
    flight_pids+=($!)
done
wait "${flight_pids[@]}" || true
FLIGHT_FETCHES=$(grep -c "^/@$LOOKUP_NAME " "$T/slow-access.log" || true)
FLIGHT_OK=$(grep -c '^200 ' "$T/flight.txt" || true)
FLIGHT_WAITED=$(awk '$1 == 200 && $2 > 1 {n++} END {print n + 0}' "$T/flight.txt")
echo "  $FLIGHT_OK/$CALLERS answered 200, $FLIGHT_WAITED of them waited > 1 s on the" \
    "in-flight fetch; upstream requests: $FLIGHT_FETCHES" >&2
rig_stop "$PID_FLIGHT"

# --- 5: soak -----------------------------------------------------------------------------
PER_THREAD=$(((SOAK_REQUESTS + THREADS - 1) / THREADS))
log "5. soak: $((PER_THREAD * THREADS)) requests (-t$THREADS -c$CONNS), a quarter each cached," \
    "uncached, not-found, blocked; retry.max_attempts = 2, base_delay_ms = 10," \
    "max_delay_ms = 20; breaker off so every blocked lookup reaches the upstream"
start_service soak "$PORT_SOAK" "$UP" $'[retry]\nmax_attempts = 2\nbase_delay_ms = 10\nmax_delay_ms = 20\nmax_total_ms = 100\n[breaker]\nfailure_threshold = 0'
PID_SOAK=$SVC_PID
S5="http://127.0.0.1:$PORT_SOAK"
for path in short-video/profile/sunny.kitchen.lab short-video/profile/quiet.fox_22 \
    short-video/profile/tiny.baker_7 photo-share/profile/lumen.trails \
    photo-share/profile/quiet_harbor; do
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "$AUTH" "$S5/$path")
    [[ $code == 200 ]] || die "warming $path answered $code"
done
mkdir -p "$T/soak-done"
soak_fetch_before=$(lines "$T/upstream-access.log")
SOAK_REQUESTS_PER_THREAD=$PER_THREAD SOAK_DONE_DIR=$T/soak-done \
    wrk -t"$THREADS" -c"$CONNS" -d"${SOAK_MAX_SECONDS}s" --timeout 10s \
    -s "$REPO/scripts/soak.lua" -H "$AUTH" "$S5" >"$T/soak.txt" 2>&1 &
WRK_PID=$!
PIDS+=("$WRK_PID")
deadline=$((SECONDS + SOAK_MAX_SECONDS + 5))
while kill -0 "$WRK_PID" 2>/dev/null && ((SECONDS < deadline)); do
    n=$(find "$T/soak-done" -name 'done.*' | wc -l)
    ((n >= THREADS)) && kill -INT "$WRK_PID" 2>/dev/null || true
    sleep 0.2
done
wait "$WRK_PID" || true
sed -n '/^soak:/,$p' "$T/soak.txt" >&2
SOAK_LINE=$(grep '^SOAK_RESULT' "$T/soak.txt" || true)
[[ -n $SOAK_LINE ]] || die "the soak printed no result: $(cat "$T/soak.txt")"
field() { tr ' ' '\n' <<<"$SOAK_LINE" | awk -F= -v k="$1" '$1 == k {print $2}'; }
SOAK_FETCHES=$(($(lines "$T/upstream-access.log") - soak_fetch_before))
HWM_SOAK=$(hwm_mib "$PID_SOAK")
RSS_SOAK=$(rss_mib "$PID_SOAK")
SOAK_WARN=$(grep -ciE 'warn|error' "$T/soak.log" || true)
echo "  upstream requests during the soak: $SOAK_FETCHES; service log lines (warn+): $SOAK_WARN" >&2

# --- summary -----------------------------------------------------------------------------
verdict() { rig_judge cmp "$1" "$2" "$3"; }
fast_500() { [[ $1 == 500 ]] && cmp "$2" '<' 2; }
row() { printf '%-54s %22s  %-8s %s\n' "$@"; }
bad_note() { local n=${WRK_BAD[$1]:-0}; ((n == 0)) || echo " ($n non-2xx/socket errors!)"; }
echo
echo "profile-lookup load figures, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores," \
    "wrk -t$THREADS -c$CONNS -d${SECONDS_PER_RUN}s x $ROUNDS rounds" \
    "(rates: mean; ratios: median of per-round ratios; CPU: totals over rounds)"
row "figure" "value" "target" "verdict"
row "1. /healthz req/s$(bad_note healthz)" "$HEALTHZ" "" ""
row "   cached lookup req/s$(bad_note cached)" "$CACHED" "" ""
row "   cached / healthz (median of rounds: ${R1S[*]})" "$R1" ">= 0.8" "$(verdict "$R1" '>=' 0.8)"
row "   service CPU us/req healthz / cached" "$(us_per healthz svc) / $(us_per cached svc)" \
    "(info)" "cost ratio $R1_CPU"
row "   wrk CPU us/req healthz / cached" "$(us_per healthz wrk) / $(us_per cached wrk)" \
    "(info)" ""
row "2. nginx direct, 64 x 365 KB pages req/s$(bad_note nginx64)" "$NGINX64" "" ""
row "   cache-off lookups of those names req/s$(bad_note nocache64)" "$NOCACHE64" "" ""
row "   cache-off / nginx (median of rounds: ${R2S[*]})" "$R2" ">= 0.5" "$(verdict "$R2" '>=' 0.5)"
row "   upstream fetches per lookup (64 names)" "$FETCH_PER_DISTINCT" "(~1)" ""
row "   CPU us/req nginx-direct: nginx / wrk" "$(us_per nginx64 ngx) / $(us_per nginx64 wrk)" \
    "(info)" ""
row "   CPU us/req cache-off: svc / nginx / wrk" \
    "$(us_per nocache64 svc) / $(us_per nocache64 ngx) / $(us_per nocache64 wrk)" "(info)" ""
row "2'. nginx direct, one page req/s$(bad_note nginx)" "$NGINX_RPS" "" ""
row "   cache-off lookups of that name req/s$(bad_note nocache)" "$NOCACHE" "" ""
row "   cache-off / nginx (one name; coalesced)" "$R2_SAME" "(info)" ""
row "   upstream fetches per lookup (one name)" "$FETCH_PER_SAME" "(info)" ""
row "   VmHWM cached / cache-off instance, MiB" "$HWM_CACHED / $HWM_NOCACHE" "(info)" ""
row "3. VmHWM after 64 MiB + gzip-bomb lookups, MiB" "$HWM_RSS_SEQ" "< 200" \
    "$(verdict "$HWM_RSS_SEQ" '<' 200)"
row "   64 MiB body: status code, seconds" "$BIG_STATUS $BIG_SECONDS" "500 fast" \
    "$(rig_judge fast_500 "$BIG_STATUS" "$BIG_SECONDS")"
row "   gzip bomb: status code, seconds" "$BOMB_STATUS $BOMB_SECONDS" "500 fast" \
    "$(rig_judge fast_500 "$BOMB_STATUS" "$BOMB_SECONDS")"
row "   (problem codes: $BIG_CODE / $BOMB_CODE)" "" "" ""
row "   VmHWM after 32 concurrent oversized, MiB" "$HWM_RSS_BURST" "(< 200)" \
    "$(verdict "$HWM_RSS_BURST" '<' 200) ($BURST_500/32 answered 500)"
row "4. upstream requests for $CALLERS concurrent callers" "$FLIGHT_FETCHES" "1" \
    "$(rig_judge test "$FLIGHT_FETCHES:$FLIGHT_OK" = "1:$CALLERS") ($FLIGHT_OK answered 200, $FLIGHT_WAITED waited > 1 s)"
row "5. soak requests (finished threads $(field finished)/$(field threads))" "$(field total)" "" ""
row "   soak unexpected answers" "$(field unexpected)" "0" "$(verdict "$(field unexpected)" '==' 0)"
row "   soak throughput req/s" "$(field rps)" "(info)" ""
row "   soak latency p50 / p99 ms" "$(field p50_ms) / $(field p99_ms)" "(info)" ""
row "   soak VmHWM (VmRSS at end), MiB" "$HWM_SOAK ($RSS_SOAK)" "(< 200)" \
    "$(verdict "$HWM_SOAK" '<' 200)"
row "   soak upstream requests" "$SOAK_FETCHES" "(info)" ""
echo "soak config: retry.max_attempts = 2, base_delay_ms = 10, max_delay_ms = 20," \
    "max_total_ms = 100, breaker.failure_threshold = 0 (blocked names fail fast)"

# --- the second table: cost per lookup and the fleet ---------------------------------------
LOADAVG_END=$(cut -d" " -f1-3 /proc/loadavg)
echo
echo "cost per lookup and the fleet (CPU: utime + stime from /proc/PID/stat over a wrk run ÷" \
    "requests completed, nginx master + workers; ratios: median of $ROUNDS alternating rounds)"
row "figure" "value" "goal" "verdict"
# The two CPU goals, each against its floor on this machine: a cached lookup against nginx
# answering the same body as a static file (the cheapest way to send those bytes), and an
# uncached one against wrk itself receiving the same pages from nginx (a C client that only
# receives and frames the bytes, answers no one and parses nothing).
CACHED_VS_NGINX=$(div "$(us_per cached svc)" "$(us_per nginxbody ngx)")
UNCACHED_VS_FLOOR=$(div "$(us_per nocache64 svc)" "$(us_per nginx64 wrk)")
row "cached CPU ÷ nginx's static answer of that body" "$CACHED_VS_NGINX" "<= 1.0" \
    "$(verdict "$CACHED_VS_NGINX" '<=' 1.0)"
row "   CPU us/req cached svc / nginx static body" \
    "$(us_per cached svc) / $(us_per nginxbody ngx)" "(info)" ""
row "uncached CPU ÷ the bare-client floor (wrk per page)" "$UNCACHED_VS_FLOOR" "<= 3" \
    "$(verdict "$UNCACHED_VS_FLOOR" '<=' 3)"
row "   CPU us/req cache-off svc / wrk reading from nginx" \
    "$(us_per nocache64 svc) / $(us_per nginx64 wrk)" "(info)" ""
# The ratios the goals were first written against, for comparison with earlier runs.
row "   cached CPU ÷ /healthz CPU (rounds: ${CPU1S[*]})" "$(median "${CPU1S[@]}")" "(info)" ""
row "   nginx's CPU serving that body as a file ÷ /healthz's" \
    "$(div "$(us_per nginxbody ngx)" "$(us_per healthz svc)")" "(info)" \
    "$(us_per nginxbody ngx) / $(us_per healthz svc) us"
row "   uncached CPU ÷ nginx CPU per page (rounds: ${CPU2S[*]})" "$(median "${CPU2S[@]}")" \
    "(info)" "$(us_per nocache64 svc) / $(us_per nginx64 ngx) us"
row "   floor: wrk's CPU reading those pages ÷ nginx's" \
    "$(div "$(us_per nginx64 wrk)" "$(us_per nginx64 ngx)")" "(info)" \
    "$(us_per nginx64 wrk) / $(us_per nginx64 ngx) us"
row "fleet: cached Redis on ÷ off (rounds: ${R3S[*]})" "$R3" ">= 0.7" "$(verdict "$R3" '>=' 0.7)"
row "   cached req/s Redis on / off" "$FLEET_ON / $FLEET_OFF" "(info)" ""
row "   service CPU us/req Redis on / off" \
    "$(us_per fleet_on svc) / $(us_per fleet_off svc)" "(info)" ""
row "fleet: Redis hit ÷ memory hit (rounds: ${R4S[*]})" "$R4" ">= 0.5" "$(verdict "$R4" '>=' 0.5)"
row "   req/s Redis hit / memory hit (64 names)" "$(mean "${RH[@]}") / $(mean "${MH[@]}")" \
    "(info)" ""
# Quota leases: a lease call is shared by the requests it serves, so "1" is 1 plus that share.
row "Redis round trips/request: in memory / in Redis" "$RT_MEMORY / $RT_REDIS" "1 / 1" \
    "$(rig_judge eval 'cmp "$RT_MEMORY" "<=" 1.05 && cmp "$RT_REDIS" "<=" 1.05')"
row "   uncached (64 names, one Redis)" "$RT_UNCACHED" "report" "$RT_UNCACHED_KINDS"
row "latency p50 / p99 ms, cached, Redis off at ${HALF}/s" \
    "$(pfield "$PACED_OFF" p50_ms) / $(pfield "$PACED_OFF" p99_ms)" "report" \
    "(sent at $(pfield "$PACED_OFF" rate)/s, $(pfield "$PACED_OFF" bad) bad)"
row "latency p50 / p99 ms, cached, Redis on at ${HALF_ON}/s" \
    "$(pfield "$PACED_ON" p50_ms) / $(pfield "$PACED_ON" p99_ms)" "report" \
    "(sent at $(pfield "$PACED_ON" rate)/s, $(pfield "$PACED_ON" bad) bad)"
row "load average at start / end" "$LOADAVG_START / $LOADAVG_END" "(info)" ""
rig_exit_on_miss
