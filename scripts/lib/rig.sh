# shellcheck shell=bash
# Sourced by every script in scripts/: what they need to stand up a rig on 127.0.0.1 (a temp
# dir, free ports, the release binary, the sample pages, nginx, redis-server) and the one way
# to start the service and wait until it answers. Brings in common.sh (log, die, statistics).

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# --- the work dir and everything started in it ----------------------------------------------

# rig_workdir NAME [KEEP]: a temp dir $T (readable by nginx workers, which run unprivileged
# when nginx is started by root) and an empty $PIDS. On exit every process in PIDS is stopped
# and waited for, and $T is removed unless KEEP is 1; INT and TERM exit 130 the same way.
rig_workdir() {
    T=$(mktemp -d "/tmp/profile-lookup-$1.XXXXXX")
    chmod 755 "$T"
    PIDS=()
    RIG_KEEP=${2:-0}
    trap rig_cleanup EXIT
    trap 'exit 130' INT TERM
}

# rig_judge COMMAND...: prints PASS when COMMAND succeeds, else MISS, and records the miss in
# $T/missed (a file, because a table's verdicts run inside $(...), where a variable set is lost).
rig_judge() {
    if "$@"; then echo PASS; else
        echo MISS
        echo "$*" >>"$T/missed"
    fi
}

# rig_exit_on_miss: exits 1, saying how many, when rig_judge recorded a missed goal.
rig_exit_on_miss() {
    [[ -s $T/missed ]] || return 0
    echo "$(wc -l <"$T/missed") goal(s) missed" >&2
    exit 1
}

rig_cleanup() {
    local status=$? pid
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [[ $RIG_KEEP == 1 ]]; then echo "kept $T" >&2; else rm -rf "$T"; fi
    exit "$status"
}

# rig_stop PID: stops one process the rig started and waits for it.
rig_stop() {
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}

# --- ports ----------------------------------------------------------------------------------

# rig_free_ports N: N distinct ports the OS picked as free just now (the sockets are held
# together while choosing, so no two are the same). The machine is shared: never a fixed port.
rig_free_ports() {
    python3 -c '
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))' "$1"
}

# rig_still_free PORT...: dies when one was taken between choosing and using it.
rig_still_free() {
    local port
    for port in "$@"; do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            die "127.0.0.1:$port was taken between choosing and using it; run again"
        fi
    done
}

# --- tools and builds -----------------------------------------------------------------------

# rig_install COMMAND=PACKAGE...: apt-get installs the packages whose command is missing
# (nginx counts as present when /usr/sbin/nginx is). Sets NGINX to the nginx binary.
rig_install() {
    local need=() pair cmd
    for pair in "$@"; do
        cmd=${pair%%=*}
        command -v "$cmd" >/dev/null && continue
        [[ $cmd == nginx && -x /usr/sbin/nginx ]] && continue
        need+=("${pair#*=}")
    done
    if ((${#need[@]})); then
        log "installing ${need[*]} from Debian"
        local sudo=()
        [[ $(id -u) -eq 0 ]] || sudo=(sudo)
        "${sudo[@]}" apt-get update -qq
        DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${need[@]}" >/dev/null
    fi
    NGINX=$(command -v nginx || echo /usr/sbin/nginx)
}

# rig_binary: sets BIN to the service's binary: $PROFILE_LOOKUP_BIN when set (CI builds it once
# for every script), else the release build of this checkout, built (or brought up to date)
# here.
rig_binary() {
    if [[ -n ${PROFILE_LOOKUP_BIN:-} ]]; then
        [[ -x $PROFILE_LOOKUP_BIN ]] || die "PROFILE_LOOKUP_BIN=$PROFILE_LOOKUP_BIN is not an executable"
        BIN=$PROFILE_LOOKUP_BIN
        return
    fi
    log "building the release binary (CARGO_TARGET_DIR=$CARGO_TARGET_DIR)"
    (cd "$REPO" && cargo build --release --locked --quiet --bin profile-lookup)
    BIN=$CARGO_TARGET_DIR/release/profile-lookup
    [[ -x $BIN ]] || die "no binary at $BIN"
}

# rig_examples NAME...: builds the release examples (examples/NAME.rs) into
# $CARGO_TARGET_DIR/release/examples/.
rig_examples() {
    local args=() name
    for name in "$@"; do args+=(--example "$name"); done
    (cd "$REPO" && cargo build --release --locked --quiet "${args[@]}")
}

# rig_upstream LOADGEN ARG...: starts `LOADGEN upstream ARG...` (a load example playing the
# platform, its output to $T/upstream.out) and waits (5 s at most) for its `LISTENING ...` line:
# sets UPSTREAM_LINE to what follows `LISTENING ` (the ports it serves on).
rig_upstream() {
    local loadgen=$1
    shift
    "$loadgen" upstream "$@" >"$T/upstream.out" 2>&1 &
    PIDS+=($!)
    UPSTREAM_LINE=""
    for _ in $(seq 100); do
        UPSTREAM_LINE=$(sed -n 's/^LISTENING \(.*\)$/\1/p' "$T/upstream.out")
        [[ -n $UPSTREAM_LINE ]] && return 0
        sleep 0.05
    done
    die "the platform did not start: $(cat "$T/upstream.out")"
}

# rig_miss TEXT: prints `MISS  TEXT` and records the miss in $T/missed, as rig_judge does.
rig_miss() {
    echo "MISS  $1"
    echo "$1" >>"$T/missed"
}

# rig_goal TEXT CONDITION: prints `PASS  TEXT` when the awk CONDITION holds, else rig_miss TEXT.
rig_goal() {
    if awk "BEGIN { exit !($2) }"; then echo "PASS  $1"; else rig_miss "$1"; fi
}

# rig_clean_env: drops PROFILE_LOOKUP_* and RUST_LOG from the environment, so the services the
# rig starts read only the config files it writes. (Resolve BIN with rig_binary first.)
rig_clean_env() {
    local v
    for v in $(compgen -e | grep -E '^(PROFILE_LOOKUP|RUST_LOG)' || true); do unset "$v"; done
}

# --- the service ----------------------------------------------------------------------------

# rig_launch NAME COMMAND...: starts COMMAND in the background, its output to $T/NAME.log;
# adds it to PIDS and sets SVC_PID. The one place a script starts the service.
rig_launch() {
    local name=$1
    shift
    "$@" >"$T/$name.log" 2>&1 &
    SVC_PID=$!
    PIDS+=("$SVC_PID")
}

# rig_wait_healthy NAME URL: waits until URL/healthz answers (10 s at most); dies with the
# service's log when it exits first or never answers.
rig_wait_healthy() {
    local name=$1 url=$2
    for _ in $(seq 100); do
        curl -sf -o /dev/null "$url/healthz" && return 0
        kill -0 "$SVC_PID" 2>/dev/null || die "$name exited: $(cat "$T/$name.log")"
        sleep 0.1
    done
    die "$name did not become healthy: $(cat "$T/$name.log")"
}

# rig_serve BINARY NAME PORT TOML: `BINARY serve` with the config TOML (written to $T/NAME.toml,
# its output to $T/NAME.log), listening on 127.0.0.1:PORT, and waited for until /healthz
# answers. Sets SVC_PID.
rig_serve() {
    local bin=$1 name=$2 port=$3
    printf '%s\n' "$4" >"$T/$name.toml"
    rig_launch "$name" "$bin" serve --config "$T/$name.toml"
    rig_wait_healthy "$name" "http://127.0.0.1:$port"
}

# rig_demo [NAME=VALUE...]: `$BIN demo` on a port the OS picks, with those environment
# variables, waited for until /healthz answers. Reads the address and the fresh key from its
# banner: sets DEMO_URL, DEMO_KEY, DEMO_PID and DEMO_LOG (the banner and the service's log).
rig_demo() {
    rig_launch demo env "$@" "$BIN" demo --listen 127.0.0.1:0
    DEMO_PID=$SVC_PID
    DEMO_LOG=$T/demo.log
    local line=""
    for _ in $(seq 100); do
        line=$(grep -m1 'Listening on http://' "$DEMO_LOG" || true)
        [[ -n $line ]] && break
        kill -0 "$DEMO_PID" 2>/dev/null || break
        sleep 0.1
    done
    DEMO_URL=$(sed -n 's/.*Listening on \(http:\/\/[^ ]*\).*/\1/p' <<<"$line")
    DEMO_KEY=$(sed -n 's/.*API key: \([^ ]*\).*/\1/p' <<<"$line")
    [[ -n $DEMO_URL && -n $DEMO_KEY ]] ||
        die "the demo did not start (no 'Listening on ... API key: ...' line): $(cat "$DEMO_LOG")"
    rig_wait_healthy demo "$DEMO_URL"
}

# rig_service_toml PORT KEY SHORT_VIDEO_URL PHOTO_SHARE_URL [PER_MINUTE BURST]: a service
# config on 127.0.0.1:PORT accepting KEY, with a per-key quota (by default so high it never
# interferes), an outbound budget that never interferes, and logs at warn; the caller appends
# its own sections.
rig_service_toml() {
    cat <<EOF
[server]
listen = "127.0.0.1:$1"
max_in_flight = 4096
[auth]
api_keys = ["$2"]
[rate_limit]
per_key_per_minute = ${5:-1000000000}
burst = ${6:-1000000}
[short_video]
base_url = "$3"
requests_per_second = 1000000
burst = 1000000
max_concurrency = 256
[photo_share]
base_url = "$4"
requests_per_second = 1000000
burst = 1000000
max_concurrency = 256
[log]
level = "warn"
EOF
}

# --- what the service talks to --------------------------------------------------------------

# rig_pages DIR: the invented sample documents (examples/sample_pages.rs, built with
# rig_examples), readable by nginx's workers.
rig_pages() {
    "$CARGO_TARGET_DIR/release/examples/sample_pages" "$1" >/dev/null
    chmod -R a+rX "$1"
}

# rig_nginx_head DIR WORKERS: the start of an nginx.conf that keeps everything in DIR (pid,
# error log, temp paths), up to inside `http {`; the caller adds its servers and the `}`.
rig_nginx_head() {
    mkdir -p "$1/nginx-tmp"
    cat <<CONF
worker_processes $2;
daemon off;
pid $1/nginx.pid;
error_log $1/nginx-error.log warn;
events { worker_connections 4096; }
http {
    client_body_temp_path $1/nginx-tmp/body;
    proxy_temp_path $1/nginx-tmp/proxy;
    fastcgi_temp_path $1/nginx-tmp/fastcgi;
    uwsgi_temp_path $1/nginx-tmp/uwsgi;
    scgi_temp_path $1/nginx-tmp/scgi;
    types { }
    default_type "text/html; charset=utf-8";
    keepalive_requests 1000000;
    log_format names '\$request_uri \$status';
CONF
}

# rig_nginx: starts $NGINX (from rig_install) with $T/nginx.conf, waits for its pid file, and
# adds it to PIDS.
rig_nginx() {
    "$NGINX" -e "$T/nginx-error.log" -p "$T" -c "$T/nginx.conf" &
    PIDS+=($!)
    for _ in $(seq 50); do [[ -s $T/nginx.pid ]] && return 0; sleep 0.1; done
    die "nginx did not start: $(cat "$T/nginx-error.log")"
}

# rig_redis_ping PORT: true when a Redis on 127.0.0.1:PORT answers PING (no redis-cli needed).
rig_redis_ping() {
    local reply
    reply=$( (exec 3<>"/dev/tcp/127.0.0.1/$1" && printf 'PING\r\n' >&3 && read -r -t 1 r <&3 &&
        echo "$r") 2>/dev/null || true)
    [[ $reply == +PONG* ]]
}

# rig_redis PORT: a redis-server on 127.0.0.1:PORT without persistence (log $T/redis.log),
# waited for until it answers PING. Adds it to PIDS and sets REDIS_PID.
rig_redis() {
    redis-server --port "$1" --bind 127.0.0.1 --save '' --appendonly no >"$T/redis.log" 2>&1 &
    REDIS_PID=$!
    PIDS+=("$REDIS_PID")
    for _ in $(seq 100); do
        rig_redis_ping "$1" && return 0
        sleep 0.05
    done
    die "redis-server did not start: $(cat "$T/redis.log")"
}

# rig_redis_up PORT...: each service's profile_lookup_redis_up gauge, comma-separated ("1,1,1"
# when three replicas all work on the fleet's shared state).
rig_redis_up() {
    local port
    for port in "$@"; do
        curl -s --max-time 5 "http://127.0.0.1:$port/metrics" |
            awk '$1 == "profile_lookup_redis_up" {print $2}'
    done | paste -sd, -
}

# The wrk script that spreads requests over the 64 sample names (see the file for its knobs).
# shellcheck disable=SC2034 # used by the scripts that source this
RIG_ROTATE_LUA=$REPO/scripts/lib/rotate.lua
