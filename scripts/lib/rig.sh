# Sourced by the loopback load scripts (load.sh, fleet.sh, profile.sh, ab.sh): what they need to
# stand up their rig on 127.0.0.1. Expects `log` and `die` functions and CARGO_TARGET_DIR from
# the caller.

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

rig_cleanup() {
    local status=$? pid
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [[ $RIG_KEEP == 1 ]]; then echo "kept $T" >&2; else rm -rf "$T"; fi
    exit "$status"
}

# rig_serve BINARY NAME PORT TOML: `BINARY serve` with the config TOML (written to $T/NAME.toml,
# its output to $T/NAME.log), listening on 127.0.0.1:PORT; added to PIDS, and waited for until
# /healthz answers (dies with its log if it exits or is not healthy within 10 s). Sets SVC_PID.
rig_serve() {
    local bin=$1 name=$2 port=$3
    printf '%s\n' "$4" >"$T/$name.toml"
    "$bin" serve --config "$T/$name.toml" >"$T/$name.log" 2>&1 &
    SVC_PID=$!
    PIDS+=("$SVC_PID")
    for _ in $(seq 100); do
        curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && return 0
        kill -0 "$SVC_PID" 2>/dev/null || die "$name exited: $(cat "$T/$name.log")"
        sleep 0.1
    done
    die "$name did not become healthy: $(cat "$T/$name.log")"
}

# rig_clean_env: drops PROFILE_LOOKUP_* and RUST_LOG from the environment, so the services the
# rig starts read only the config files it writes.
rig_clean_env() {
    local v
    for v in $(compgen -e | grep -E '^(PROFILE_LOOKUP|RUST_LOG)' || true); do unset "$v"; done
}

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

# rig_build REPO: the release binary and the sample pages writer; sets BIN.
rig_build() {
    log "building (CARGO_TARGET_DIR=$CARGO_TARGET_DIR)"
    (cd "$1" && cargo build --release --quiet && cargo build --release --quiet --example sample_pages)
    BIN=$CARGO_TARGET_DIR/release/profile-lookup
    [[ -x $BIN ]] || die "no binary at $BIN"
}

# rig_pages DIR: the invented sample documents, readable by nginx's workers.
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

# rig_service_toml PORT KEY SHORT_VIDEO_URL PHOTO_SHARE_URL: a service config on 127.0.0.1:PORT
# accepting KEY, with a per-key limit and outbound budget so high they never interfere and logs
# at warn; the caller appends its own sections.
rig_service_toml() {
    cat <<EOF
[server]
listen = "127.0.0.1:$1"
max_in_flight = 4096
[auth]
api_keys = ["$2"]
[rate_limit]
per_key_per_minute = 1000000000
burst = 1000000
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
