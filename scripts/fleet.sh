#!/usr/bin/env bash
# A fleet of replicas sharing their state, for real and all on 127.0.0.1: three release-binary
# replicas and a real redis-server behind nginx round robin, against nginx serving the invented
# sample pages, measured with wrk and curl. Prints the fleet's figures and a PASS/MISS table;
# exits non-zero when a figure misses its target.
#
#   bash scripts/fleet.sh        # needs root (or sudo) only to apt-get wrk, nginx, redis
#
# Figures:
#   1. quota accuracy: one key, wrk through the balancer; allowed ÷ what one replica allows
#      (burst + rate × seconds), target within ±5 % (and without Redis, for contrast: ~3×);
#   2. upstream requests per name: 30 concurrent callers per name spread over the replicas,
#      against a slow upstream so that misses overlap; target 1;
#   3. Redis-hit ÷ memory-hit throughput of one replica (a replica with no memory cache reads
#      every answer from Redis); target ≥ 0.5;
#   4. cached throughput through the balancer with and without Redis (reported);
#   5. Redis killed and restarted in the middle of a wrk run through the balancer over found
#      and not-found names; target: errors (5xx, socket errors) 0.
#
# Honours CARGO_TARGET_DIR and PROFILE_LOOKUP_BIN. Knobs: FLEET_SECONDS=10 FLEET_THREADS=2
# FLEET_CONNECTIONS=32 FLEET_KEEP_TMP=1 (keep the temp dir with every log).
set -euo pipefail

# shellcheck source=lib/rig.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/rig.sh"
SECS=${FLEET_SECONDS:-10}
THREADS=${FLEET_THREADS:-2}
CONNS=${FLEET_CONNECTIONS:-32}
# Ports the OS picked as free just now, held together so they are distinct: upstream, slow
# upstream, balancer, Redis, three replicas, two single replicas for figure 3.
read -r UP_PORT SLOW_PORT LB_PORT REDIS_PORT R1 R2 R3 MEM_PORT NOMEM_PORT \
    < <(rig_free_ports 9)
REPLICA_PORTS=("$R1" "$R2" "$R3")
NAME=sunny.kitchen.lab
KEY="fleet-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
AUTH="Authorization: Bearer $KEY"

# --- tools, build ------------------------------------------------------------------------
rig_install wrk=wrk nginx=nginx-light curl=curl redis-server=redis-server
rig_binary
rig_examples sample_pages

# --- temp dir, cleanup -------------------------------------------------------------------
rig_workdir fleet "${FLEET_KEEP_TMP:-0}"
rig_clean_env
declare -A PID=() # the replicas by name

rig_still_free "$UP_PORT" "$SLOW_PORT" "$LB_PORT" "$REDIS_PORT" "$R1" "$R2" "$R3" "$MEM_PORT" \
    "$NOMEM_PORT"
rig_pages "$T/pages"

# --- nginx: the upstream, a slow copy of it, and the balancer ----------------------------
{
    rig_nginx_head "$T" 1
    cat <<EOF
    server {
        listen 127.0.0.1:$UP_PORT;
        root $T/pages;
        access_log $T/upstream.log names;
        # Names the samples do not have get the platform's own "no such user" page.
        location ~ ^/@gone\. { rewrite ^ /@no_such_user_404 break; }
        location / { try_files \$uri =404; }
    }
    server {
        listen 127.0.0.1:$SLOW_PORT;
        root $T/pages;
        limit_rate 1m;
        access_log $T/slow.log names;
        location / { try_files \$uri =404; }
    }
    upstream fleet {
        server 127.0.0.1:$R1 max_fails=0;
        server 127.0.0.1:$R2 max_fails=0;
        server 127.0.0.1:$R3 max_fails=0;
        keepalive 64;
    }
    server {
        listen 127.0.0.1:$LB_PORT;
        access_log off;
        location / {
            proxy_pass http://fleet;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
}
EOF
} >"$T/nginx.conf"
rig_nginx
UP="http://127.0.0.1:$UP_PORT"
SLOW="http://127.0.0.1:$SLOW_PORT"
LB="http://127.0.0.1:$LB_PORT"
for _ in $(seq 50); do curl -sf -o /dev/null "$UP/@$NAME" && break; sleep 0.1; done
curl -sf -o /dev/null "$UP/@$NAME" || die "nginx does not serve the samples: $(cat "$T/nginx-error.log")"

stop_replica() { rig_stop "${PID[$1]}"; unset "PID[$1]"; }

# The quota every replica started next gets (figure 1 sets a finite one).
PER_MIN=1000000000 BURST=1000000
# replica ID PORT REDIS_URL SHORT_VIDEO_URL EXTRA_TOML
replica() {
    local id=$1 port=$2 redis_url=$3 sv_url=$4 extra=$5
    rig_serve "$BIN" "$id" "$port" "$(rig_service_toml "$port" "$KEY" "$sv_url" "$UP" "$PER_MIN" \
        "$BURST")"$'\n[redis]\nurl = "'"$redis_url"$'"\nkey_prefix = "fleet:"\n'"$extra"
    PID[$id]=$SVC_PID
}
# fleet REDIS_URL SHORT_VIDEO_URL EXTRA_TOML: (re)starts the three replicas
fleet() {
    local i
    for i in 1 2 3; do [[ -n ${PID[r$i]:-} ]] && stop_replica "r$i"; done
    for i in 1 2 3; do replica "r$i" "${REPLICA_PORTS[$((i - 1))]}" "$1" "$2" "$3"; done
}
# wrk_run LABEL URL [wrk args] -> REQS, NON2XX, SECS_RUN, RPS, SOCKET_ERRORS
wrk_run() {
    local label=$1 url=$2
    shift 2
    wrk -t"$THREADS" -c"$CONNS" -d"${SECS}s" --timeout 10s "$@" "$url" >"$T/wrk-$label.txt" 2>&1
    REQS=$(awk '/requests in/ {print $1}' "$T/wrk-$label.txt")
    SECS_RUN=$(awk '/requests in/ {gsub(/s,/, "", $4); print $4}' "$T/wrk-$label.txt")
    NON2XX=$(awk '/Non-2xx/ {print $NF}' "$T/wrk-$label.txt")
    NON2XX=${NON2XX:-0}
    SOCKET_ERRORS=$(awk '/Socket errors/ {gsub(/,/, ""); print $4 + $6 + $8 + $10}' "$T/wrk-$label.txt")
    SOCKET_ERRORS=${SOCKET_ERRORS:-0}
    RPS=$(awk '/Requests\/sec/ {printf "%.0f", $2}' "$T/wrk-$label.txt")
}
REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
rig_redis "$REDIS_PORT"
declare -a TABLE=()
MISSED=0
figure_row() { # figure value target pass
    TABLE+=("$(printf '%-52s %-14s %-12s %s' "$1" "$2" "$3" "$4")")
    [[ $4 == PASS || $4 == info ]] || MISSED=$((MISSED + 1))
}

# --- 1: quota accuracy -------------------------------------------------------------------
QUOTA_PER_MIN=6000 QUOTA_BURST=500
for mode in redis none; do
    url=$REDIS_URL
    [[ $mode == none ]] && url=""
    log "1. quota through the balancer ($mode): $QUOTA_PER_MIN a minute, burst $QUOTA_BURST"
    PER_MIN=$QUOTA_PER_MIN BURST=$QUOTA_BURST fleet "$url" "$UP" ""
    curl -sf -o /dev/null -H "$AUTH" "http://127.0.0.1:$R1/short-video/profile/$NAME" # warm
    wrk_run "quota-$mode" "$LB/short-video/profile/$NAME" -H "$AUTH"
    allowed=$((REQS - NON2XX + 1))
    one=$(awk -v b="$QUOTA_BURST" -v r="$QUOTA_PER_MIN" -v s="$SECS_RUN" 'BEGIN {printf "%.0f", b + r / 60 * s}')
    ratio=$(div "$allowed" "$one")
    echo "allowed $allowed of $REQS in ${SECS_RUN}s; one replica allows $one; ratio $ratio" >&2
    if [[ $mode == redis ]]; then
        QUOTA_RATIO=$ratio
        pass=MISS
        cmp "$ratio" '>=' 0.95 && cmp "$ratio" '<=' 1.05 && pass=PASS
        figure_row "1. quota: allowed ÷ one replica's (Redis)" "$ratio" "1 ± 0.05" "$pass"
    else
        figure_row "1. quota: allowed ÷ one replica's (no Redis)" "$ratio" "(~3)" info
    fi
done

# --- 2: upstream requests per name -------------------------------------------------------
log "2. one flight: 30 concurrent callers per name over the balancer, 20 names, slow upstream"
fleet "$REDIS_URL" "$SLOW" ""
: >"$T/slow.log"
for n in $(seq -w 0 19); do
    for _ in $(seq 30); do echo "$LB/short-video/profile/bench.user_$n"; done
done | xargs -P 120 -n 1 curl -s -o /dev/null -w '%{http_code}\n' -H "$AUTH" >"$T/flight-codes.txt"
bad=$(grep -vc '^200$' "$T/flight-codes.txt" || true)
[[ $bad == 0 ]] || die "$bad of 600 one-flight lookups did not answer 200"
per_name=$(awk '$1 ~ /^\/@bench\.user_/ {n[$1]++} END {max = 0; for (k in n) {t += n[k]; c++; if (n[k] > max) max = n[k]} printf "%.2f %d %d", t / c, max, c}' "$T/slow.log")
read -r mean_per_name max_per_name names_seen <<<"$per_name"
echo "upstream requests per name: mean $mean_per_name, max $max_per_name over $names_seen names" >&2
pass=MISS
[[ $max_per_name == 1 && $names_seen == 20 ]] && pass=PASS
figure_row "2. upstream requests per name (600 calls, 20 names)" "$mean_per_name (max $max_per_name)" "1" "$pass"

# --- 3: Redis hit vs memory hit ----------------------------------------------------------
log "3. one replica: memory hit vs Redis hit (a replica without memory cache), 64 names"
replica mem "$MEM_PORT" "$REDIS_URL" "$UP" ""
replica nomem "$NOMEM_PORT" "$REDIS_URL" "$UP" $'[cache]\nmax_bytes = 0'
for n in $(seq -w 0 63); do
    curl -sf -o /dev/null -H "$AUTH" "http://127.0.0.1:$MEM_PORT/short-video/profile/bench.user_$n"
done
# Each wrk thread cycles over its own slice of the 64 names (lib/rotate.lua), so few requests
# for one name are in the air at once (concurrent callers of one name would share one Redis
# read).
export ROTATE_THREADS=$THREADS
before=$(wc -l <"$T/upstream.log")
wrk_run memhit "http://127.0.0.1:$MEM_PORT" -s "$RIG_ROTATE_LUA" -H "$AUTH"
MEM_RPS=$RPS
wrk_run redishit "http://127.0.0.1:$NOMEM_PORT" -s "$RIG_ROTATE_LUA" -H "$AUTH"
REDIS_RPS=$RPS
fetched=$(($(wc -l <"$T/upstream.log") - before))
[[ $NON2XX == 0 ]] || die "Redis-hit run had $NON2XX non-2xx answers"
[[ $fetched == 0 ]] || die "the Redis-hit run fetched $fetched times from the upstream"
# The replica without a memory cache answered from Redis reads (one per flight: callers of
# one name at the same moment share it).
redis_reads=$(curl -s "http://127.0.0.1:$NOMEM_PORT/metrics" |
    awk '$1 ~ /^profile_lookup_redis_hits_total\{.*kind="fresh"/ {s += $2} END {printf "%d", s}')
per_answer=$(div "$redis_reads" "$REQS")
echo "Redis reads: $redis_reads for $REQS answers ($per_answer a request)" >&2
cmp "$per_answer" '>=' 0.3 ||
    die "the replica without memory cache read Redis for only $per_answer of its answers"
hit_ratio=$(div "$REDIS_RPS" "$MEM_RPS")
echo "memory hit $MEM_RPS req/s, Redis hit $REDIS_RPS req/s, ratio $hit_ratio" >&2
pass=MISS
cmp "$hit_ratio" '>=' 0.5 && pass=PASS
figure_row "3. Redis-hit ÷ memory-hit throughput" "$hit_ratio" "≥ 0.5" "$pass"
figure_row "3. Redis reads per answer of the Redis-hit replica" "$per_answer" "-" info
stop_replica mem
stop_replica nomem

# --- 4: cached throughput through the balancer -------------------------------------------
for mode in redis none; do
    url=$REDIS_URL
    [[ $mode == none ]] && url=""
    log "4. cached lookups through the balancer ($mode)"
    fleet "$url" "$UP" ""
    for p in "${REPLICA_PORTS[@]}"; do
        curl -sf -o /dev/null -H "$AUTH" "http://127.0.0.1:$p/short-video/profile/$NAME"
    done
    wrk_run "lb-$mode" "$LB/short-video/profile/$NAME" -H "$AUTH"
    [[ $NON2XX == 0 && $SOCKET_ERRORS == 0 ]] || die "balancer run ($mode): $NON2XX non-2xx, $SOCKET_ERRORS socket errors"
    figure_row "4. cached req/s through the balancer ($mode)" "$RPS" "-" info
done

# --- 5: Redis killed in the middle -------------------------------------------------------
log "5. Redis killed at 1/3 and restarted at 2/3 of a ${SECS}s run over found and not-found names"
fleet "$REDIS_URL" "$UP" ""
cat >"$T/mixed.lua" <<'EOF'
-- Found names (bench.user_NN) and never-seen names (404 from the upstream) in turn; counts
-- answers that are neither 200 nor 404.
local threads = {}
function setup(thread) thread:set("tid", #threads); table.insert(threads, thread) end
function init(args) i = 0; bad = 0 end
function request()
  i = i + 1
  if i % 2 == 0 then
    return wrk.format(nil, string.format("/short-video/profile/bench.user_%02d", i % 64))
  end
  return wrk.format(nil, string.format("/short-video/profile/gone.%d_%d", tid, i))
end
function response(status, headers, body)
  if status ~= 200 and status ~= 404 then bad = bad + 1 end
end
function done(summary, latency, requests)
  local total = 0
  for _, t in ipairs(threads) do total = total + t:get("bad") end
  io.write(string.format("MIXED_BAD %d\n", total))
end
EOF
wrk -t"$THREADS" -c"$CONNS" -d"${SECS}s" --timeout 10s -s "$T/mixed.lua" -H "$AUTH" "$LB" \
    >"$T/wrk-kill.txt" 2>&1 &
WRK=$!
sleep "$(awk -v s="$SECS" 'BEGIN {print s / 3}')"
kill -9 "$REDIS_PID"
wait "$REDIS_PID" 2>/dev/null || true
for p in "${REPLICA_PORTS[@]}"; do
    code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$p/readyz")
    [[ $code == 200 ]] || die "replica on $p is not ready without Redis ($code)"
done
sleep "$(awk -v s="$SECS" 'BEGIN {print s / 3}')"
rig_redis "$REDIS_PORT"
RESTARTED=$SECONDS
# Back on Redis: each replica says so once a request of its own has used Redis again (wrk
# is still sending; after it ends, a lookup to each replica keeps them trying).
for _ in $(seq 100); do
    [[ $(rig_redis_up "${REPLICA_PORTS[@]}") == 1,1,1 ]] && break
    if ! kill -0 "$WRK" 2>/dev/null; then
        for p in "${REPLICA_PORTS[@]}"; do
            curl -s -o /dev/null -H "$AUTH" "http://127.0.0.1:$p/short-video/profile/$NAME"
        done
    fi
    sleep 0.1
done
back=$((SECONDS - RESTARTED))
wait "$WRK"
bad=$(awk '/^MIXED_BAD/ {print $2}' "$T/wrk-kill.txt")
sock=$(awk '/Socket errors/ {gsub(/,/, ""); print $4 + $6 + $8 + $10}' "$T/wrk-kill.txt")
total=$(awk '/requests in/ {print $1}' "$T/wrk-kill.txt")
errors=$((${bad:-0} + ${sock:-0}))
up=$(rig_redis_up "${REPLICA_PORTS[@]}")
echo "requests $total, errors $errors (5xx or other: ${bad:-?}, socket: ${sock:-0});" \
    "redis_up $up, ${back}s after the restart" >&2
pass=MISS
[[ $errors == 0 && $up == 1,1,1 ]] && pass=PASS
figure_row "5. errors while Redis was killed and restarted" "$errors of $total" "0" "$pass"
pass=MISS
((back <= 5)) && [[ $up == 1,1,1 ]] && pass=PASS
figure_row "5. every replica back on Redis after its restart" "≤ ${back} s" "≤ 5 s" "$pass"

# --- summary -----------------------------------------------------------------------------
printf '\n%-52s %-14s %-12s %s\n' figure value target result
printf '%s\n' "${TABLE[@]}"
printf 'total %ds\n' "$SECONDS"
((MISSED == 0)) || die "$MISSED figure(s) missed their target"
