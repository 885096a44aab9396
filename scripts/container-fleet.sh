#!/usr/bin/env bash
# The container fleet of deploy/compose.yaml, built and checked with a real Docker engine on
# this machine, all on 127.0.0.1:
#   1. builds the image from the Dockerfile (`--features browser`), with BuildKit, tagged
#      profile-lookup:<the crate's version>, as compose and the Kubernetes base name it;
#   2. runs 3 replicas, one Redis and nginx (round robin) through docker-compose with
#      deploy/compose.loopback.yaml (host networking, ports the OS chose, local stand-in images),
#      and a tiny stand-in upstream (python3) on the host;
#   3. checks: /healthz and /readyz of every replica, directly and through nginx; one quota per
#      key across the replicas (the count nginx lets through vs what one replica allows, ±5 %);
#      Redis stopped then started (no request fails, replicas stay ready); SIGTERM drain of one
#      replica (in-flight request finished, listener closed, exit 0 within grace, nginx serving);
#   4. prints each phase's time and the figures; stops everything it started on exit.
#
#   sudo bash scripts/container-fleet.sh            # build, run, check, clean up
#   sudo bash scripts/container-fleet.sh --keep     # keep the images and the build cache
#   sudo bash scripts/container-fleet.sh --no-redis # the same fleet without redis.url: each
#                                                   # replica on its own state (quota × 3)
#
# Needs root: it installs what is missing (docker.io, docker-compose, debootstrap, curl) with
# apt-get, starts dockerd when none answers (vfs storage, no iptables, no bridge: it logs to the
# temp dir and is stopped at the end), and builds stand-ins for images it cannot pull
# (debian:bookworm-slim by debootstrap from the mirror apt uses; rust:<version>-bookworm from
# that plus build tools plus this machine's own Rust toolchain, which must be the Dockerfile's
# version; Redis and nginx from Debian packages). Without --keep it removes the fleet image, the
# Rust stand-in and the build cache at the end (vfs stores every layer in full); with --keep
# only earlier builds' layers go. The small stand-ins stay; untagged images are always removed.
# Knobs: FLEET_DRAIN_HOLD_S=3 (how long the upstream holds the request in flight during the
# drain check), FLEET_QUOTA_REQUESTS=90 and FLEET_QUOTA_SECONDS=8 (lookups of the quota check,
# spread evenly over that time).
set -euo pipefail

# shellcheck source=lib/rig.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/rig.sh"
KEEP=0 SHARED=1
for arg in "$@"; do
    case $arg in
        --keep) KEEP=1 ;;
        --no-redis) SHARED=0 ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) printf '%s: unknown argument %s (see --help)\n' "$SCRIPT" "$arg" >&2; exit 2 ;;
    esac
done
DRAIN_HOLD_S=${FLEET_DRAIN_HOLD_S:-3}
QUOTA_REQUESTS=${FLEET_QUOTA_REQUESTS:-90}
QUOTA_SECONDS=${FLEET_QUOTA_SECONDS:-8}
# The quota of config/default.toml, which the fleet runs with.
BURST=20
PER_MINUTE=60

# The tag the Dockerfile, the compose files and the Kubernetes base name: the crate's version.
VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$REPO/Cargo.toml" | head -n1)
[[ -n $VERSION ]] || die "no version in Cargo.toml"
IMAGE=profile-lookup:$VERSION
REDIS_IMAGE=profile-lookup-standin/redis:bookworm
NGINX_IMAGE=profile-lookup-standin/nginx:bookworm
BASE_IMAGE=debian:bookworm-slim
RUST_IMAGE=$(sed -n 's/^FROM \(rust:[^ ]*\).*/\1/p' "$REPO/Dockerfile" | head -n1)
[[ -n $RUST_IMAGE ]] || die "no 'FROM rust:…' in the Dockerfile"

T=$(mktemp -d /tmp/container-fleet-XXXXXX)
chmod 755 "$T"
PROJECT=plfleet$$
SOURCES=(docker-compose -f "$REPO/deploy/compose.yaml" -f "$REPO/deploy/compose.loopback.yaml")
COMPOSE=(docker-compose -p "$PROJECT" -f "$T/fleet.yaml")

note() { printf '   %s\n' "$*" >&2; }

# --- phases, figures, checks -------------------------------------------------------------
FIGURES=() FAILED=()
figure() { FIGURES+=("$*"); note "$*"; }
check() { # check NAME CONDITION-STATUS DETAIL
    local name=$1 ok=$2 detail=$3
    if [[ $ok == 0 ]]; then figure "PASS  $name: $detail"; else
        figure "FAIL  $name: $detail"; FAILED+=("$name"); fi
}

# --- cleanup -----------------------------------------------------------------------------
PIDS=() STARTED_DOCKERD="" COMPOSE_UP=0
report() {
    phase_end
    printf '\n== phases\n'
    printf '   %s\n' "${PHASES[@]}"
    printf '\n== figures\n'
    ((${#FIGURES[@]})) && printf '   %s\n' "${FIGURES[@]}"
    if ((${#FAILED[@]})); then printf '\nFAILED: %s\n' "${FAILED[*]}"; fi
}
cleanup() {
    local status=$?
    trap - EXIT INT TERM
    set +e
    report
    log "cleaning up"
    if ((COMPOSE_UP)); then
        "${COMPOSE[@]}" logs --no-color >"$T/compose.log" 2>&1
        "${COMPOSE[@]}" down --timeout 30 >/dev/null 2>&1
    fi
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null; done
    if docker info >/dev/null 2>&1; then
        if ((!KEEP)); then
            docker image rm "$IMAGE" "$RUST_IMAGE" >/dev/null 2>&1
            docker builder prune -af >/dev/null 2>&1
        else
            # Earlier builds' layers (each a full copy under vfs); the cache mounts (target dir,
            # crate downloads) stay, so the next build compiles only what changed.
            docker builder prune -f --filter type=regular >/dev/null 2>&1
        fi
        docker image prune -f >/dev/null 2>&1 # an earlier build's image, untagged by this one
    fi
    note "docker disk use: $(du -sh /var/lib/docker 2>/dev/null | cut -f1)"
    if [[ -n $STARTED_DOCKERD ]]; then
        kill "$STARTED_DOCKERD" 2>/dev/null
        for _ in $(seq 60); do kill -0 "$STARTED_DOCKERD" 2>/dev/null || break; sleep 0.5; done
    fi
    # Logs stay for a failed run; the stand-in root file systems never do.
    rm -rf "$T/rootfs" "$T/img"
    if ((status == 0 && !KEEP)); then rm -rf "$T"; else note "logs kept in $T"; fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- tools -------------------------------------------------------------------------------
phase "tools"
[[ $(id -u) -eq 0 ]] || die "run as root (apt-get, dockerd, debootstrap)"
need=()
command -v dockerd >/dev/null || need+=(docker.io)
command -v docker-compose >/dev/null || need+=(docker-compose)
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v curl >/dev/null || need+=(curl)
command -v bc >/dev/null || need+=(bc)
command -v python3 >/dev/null || need+=(python3)
if ((${#need[@]})); then
    note "installing ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
command -v bc >/dev/null || die "bc is missing"

# --- engine ------------------------------------------------------------------------------
phase "engine"
if ! docker info >/dev/null 2>&1; then
    note "no engine answers: starting dockerd (vfs, no iptables, no bridge; log $T/dockerd.log)"
    dockerd --storage-driver=vfs --iptables=false --bridge=none >"$T/dockerd.log" 2>&1 &
    STARTED_DOCKERD=$!
    for _ in $(seq 120); do docker info >/dev/null 2>&1 && break; sleep 0.5; done
    docker info >/dev/null 2>&1 || die "dockerd did not come up; see $T/dockerd.log"
fi
note "engine $(docker version -f '{{.Server.Version}}' 2>/dev/null), storage $(docker info -f '{{.Driver}}')"
# The Dockerfile's cache mounts need BuildKit: a CLI with buildx, or one before 23.0 (which
# has BuildKit built in behind DOCKER_BUILDKIT=1). A newer CLI without buildx cannot.
BUILD=()
while read -r cli; do
    if "$cli" buildx version >/dev/null 2>&1; then BUILD=("$cli" buildx build --load); break; fi
    major=$("$cli" version -f '{{.Client.Version}}' 2>/dev/null | cut -d. -f1) || major=""
    if [[ $major =~ ^[0-9]+$ ]] && ((major < 23)); then
        BUILD=(env DOCKER_BUILDKIT=1 "$cli" build); break
    fi
done < <(type -ap docker | awk '!seen[$0]++')
((${#BUILD[@]})) || die "no docker CLI here can build with BuildKit (install docker-buildx)"
note "builder: ${BUILD[*]}"

# --- stand-in images ---------------------------------------------------------------------
# The Debian mirror apt uses on this machine (deb822 .sources first, then sources.list).
debian_mirror() {
    local f uri
    for f in /etc/apt/sources.list.d/*.sources; do
        [[ -f $f ]] || continue
        uri=$(awk '/^URIs:/ {print $2; exit}' "$f")
        [[ $uri == */debian ]] && { echo "$uri"; return; }
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [[ -f $f ]] || continue
        uri=$(awk '$1 == "deb" && $2 !~ /^\[/ && $2 ~ /\/debian$/ {print $2; exit}' "$f")
        [[ -n $uri ]] && { echo "$uri"; return; }
    done
    echo http://deb.debian.org/debian
}
MIRROR=$(debian_mirror)

# A root file system from the debootstrapped base, with PACKAGES installed in a chroot, then
# imported as one layer (vfs copies every layer in full, so one layer is the cheapest).
rootfs_base() {
    [[ -d $T/rootfs ]] && return
    note "debootstrap bookworm from $MIRROR (about a minute)"
    nice -n 10 debootstrap --variant=minbase bookworm "$T/rootfs" "$MIRROR" >"$T/debootstrap.log" 2>&1 \
        || die "debootstrap failed; see $T/debootstrap.log"
    printf 'deb %s bookworm main\ndeb %s bookworm-updates main\n' "$MIRROR" "$MIRROR" \
        >"$T/rootfs/etc/apt/sources.list"
    # This machine's apt settings about its mirror (a snapshot's Release files are past their
    # Valid-Until date), so apt-get in the images behaves as it does here.
    grep -l -E 'Check-Valid-Until|Check-Date' /etc/apt/apt.conf.d/* 2>/dev/null \
        | while read -r f; do cp "$f" "$T/rootfs/etc/apt/apt.conf.d/"; done
    rm -rf "$T/rootfs/var/cache/apt/archives/"*.deb "$T/rootfs/var/lib/apt/lists/"*
}
import_image() { # import_image TAG DIR CHANGE...
    local tag=$1 dir=$2; shift 2
    local changes=()
    for c in "$@"; do changes+=(--change "$c"); done
    tar -C "$dir" -c . | docker import "${changes[@]}" - "$tag" >/dev/null
}
image_with() { # image_with TAG "PACKAGES" CHANGE...
    local tag=$1 packages=$2; shift 2
    rootfs_base
    rm -rf "$T/img"
    cp -a "$T/rootfs" "$T/img"
    cp /etc/resolv.conf "$T/img/etc/resolv.conf"
    printf '#!/bin/sh\nexit 101\n' >"$T/img/usr/sbin/policy-rc.d" # no service starts
    chmod 755 "$T/img/usr/sbin/policy-rc.d"
    # shellcheck disable=SC2086 # PACKAGES is a list
    nice -n 10 chroot "$T/img" sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends $packages && apt-get clean" \
        >"$T/apt-$(echo "$tag" | tr '/:' '__').log" 2>&1 || die "apt-get for $tag failed"
    rm -rf "$T/img/usr/sbin/policy-rc.d" "$T/img/var/lib/apt/lists/"*
    : >"$T/img/etc/resolv.conf"
    if [[ $tag == rust:* ]]; then stage_rust "$T/img"; fi
    import_image "$tag" "$T/img" "$@"
    rm -rf "$T/img"
}
# The Rust stand-in gets this machine's toolchain (no toolchain download is possible here),
# which must be the version the Dockerfile names, and this machine's CA bundle for crates.io.
stage_rust() {
    local dir=$1 want have sysroot
    want=${RUST_IMAGE#rust:}; want=${want%%-*}
    have=$(rustc --version | awk '{print $2}')
    [[ $have == "$want" || $have == "$want".* ]] \
        || die "the Dockerfile wants Rust $want, this machine has $have: no stand-in possible"
    sysroot=$(rustc --print sysroot)
    mkdir -p "$dir/usr/local/rust" "$dir/usr/local/cargo"
    tar -C "$sysroot" --exclude=./share/doc -c . | tar -C "$dir/usr/local/rust" -x
    cp /etc/ssl/certs/ca-certificates.crt "$dir/etc/ssl/certs/ca-certificates.crt"
}

phase "stand-in images"
have_image() { docker image inspect "$1" >/dev/null 2>&1; }
if ! have_image "$BASE_IMAGE"; then
    note "$BASE_IMAGE: debootstrap minbase"
    rootfs_base
    import_image "$BASE_IMAGE" "$T/rootfs" 'CMD ["bash"]'
fi
if ! have_image "$RUST_IMAGE"; then
    note "$RUST_IMAGE: base + build tools + this machine's Rust $(rustc --version | awk '{print $2}')"
    image_with "$RUST_IMAGE" "build-essential pkg-config cmake clang libclang-dev git ca-certificates" \
        'ENV CARGO_HOME=/usr/local/cargo' \
        'ENV PATH=/usr/local/cargo/bin:/usr/local/rust/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        'CMD ["bash"]'
fi
if ! have_image "$REDIS_IMAGE"; then
    note "$REDIS_IMAGE: base + redis-server"
    image_with "$REDIS_IMAGE" "redis-server" 'USER redis' 'CMD ["redis-server"]'
fi
if ! have_image "$NGINX_IMAGE"; then
    note "$NGINX_IMAGE: base + nginx-light"
    image_with "$NGINX_IMAGE" "nginx-light" 'CMD ["nginx", "-g", "daemon off;"]'
fi
rm -rf "$T/rootfs"

# --- image -------------------------------------------------------------------------------
phase "image build"
note "${BUILD[*]} --network host -t $IMAGE $REPO (log $T/build.log)"
if ! nice -n 10 "${BUILD[@]}" --network host --progress plain -t "$IMAGE" "$REPO" >"$T/build.log" 2>&1; then
    tail -n 40 "$T/build.log" >&2
    die "image build failed; see $T/build.log"
fi
figure "image $IMAGE: $(docker image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%.1f MB", $1/1e6}')," \
    "user $(docker image inspect -f '{{.Config.User}}' "$IMAGE")," \
    "$(docker image inspect -f '{{range .Config.Env}}{{println .}}{{end}}' "$IMAGE" | grep UPSTREAM__CLIENT)"

# --- the fleet ---------------------------------------------------------------------------
phase "fleet up"
# Six ports the OS chose as free just now (held at once, so distinct).
read -r HTTP_PORT R1_PORT R2_PORT R3_PORT REDIS_PORT UPSTREAM_PORT < <(rig_free_ports 6)
REPLICA_PORTS=("$R1_PORT" "$R2_PORT" "$R3_PORT")
note "nginx $HTTP_PORT, replicas ${REPLICA_PORTS[*]}, redis $REDIS_PORT, upstream $UPSTREAM_PORT"

# Keys: only their digests reach the fleet. One per check, so that no check spends another's
# quota (20 at once, then 1 a second).
new_key() { echo "fleet-$1-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"; }
QUOTA_KEY=$(new_key quota) KEY=$(new_key health) REDIS_KEY=$(new_key redis) DRAIN_KEY=$(new_key drain)
digest() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
PROFILE_LOOKUP_API_KEY_SHA256="$(digest "$QUOTA_KEY"),$(digest "$KEY"),$(digest "$REDIS_KEY"),$(digest "$DRAIN_KEY")"
export PROFILE_LOOKUP_API_KEY_SHA256
export FLEET_IMAGE=$IMAGE FLEET_REDIS_IMAGE=$REDIS_IMAGE FLEET_NGINX_IMAGE=$NGINX_IMAGE
export FLEET_REDIS_PORT=$REDIS_PORT FLEET_UPSTREAM_PORT=$UPSTREAM_PORT
export FLEET_REPLICA_1_PORT=$R1_PORT FLEET_REPLICA_2_PORT=$R2_PORT FLEET_REPLICA_3_PORT=$R3_PORT
export FLEET_NGINX_CONF=$T/nginx.conf
# deploy/nginx/nginx.conf with loopback addresses: the one config, not a copy to keep in step.
sed -e "s/replica-1:8080/127.0.0.1:$R1_PORT/; s/replica-2:8080/127.0.0.1:$R2_PORT/" \
    -e "s/replica-3:8080/127.0.0.1:$R3_PORT/; s/listen 8080;/listen 127.0.0.1:$HTTP_PORT;/" \
    "$REPO/deploy/nginx/nginx.conf" >"$FLEET_NGINX_CONF"
grep -q "127.0.0.1:$HTTP_PORT" "$FLEET_NGINX_CONF" || die "could not adapt deploy/nginx/nginx.conf"

# The stand-in upstream for both platforms: every profile is absent (404, so a lookup ends in
# 404 profile_not_found after one upstream request and spends quota like any lookup); names
# starting with "slow" are held FLEET_DRAIN_HOLD_S seconds first. One line per request, as it
# arrives.
cat >"$T/upstream.py" <<'EOF'
import http.server, sys, time, urllib.parse

HOLD = float(sys.argv[2])

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        sys.stdout.write("%.3f %s\n" % (time.time(), self.path))
        sys.stdout.flush()
        url = urllib.parse.urlsplit(self.path)
        name = (urllib.parse.parse_qs(url.query).get("username") or [url.path.strip("/@")])[0]
        if name.startswith("slow"):
            time.sleep(HOLD)
        body = b'{"message":"User not found","status":"fail"}'
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *args):
        pass

http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
EOF
python3 "$T/upstream.py" "$UPSTREAM_PORT" "$DRAIN_HOLD_S" >"$T/upstream.log" 2>&1 &
PIDS+=($!)

# The two files merged, then with what compose 1.29 cannot take away in an override (compose
# v2 has `!reset`): published ports, which host networking makes meaningless and 1.29 refuses
# next to it; and, for --no-redis, redis.url and redis.required. The python that runs
# docker-compose has PyYAML.
"${SOURCES[@]}" config >"$T/fleet.yaml"
"$(sed -n '1s/^#! *//p' "$(command -v docker-compose)" | awk '{print $1}')" - "$T/fleet.yaml" "$SHARED" <<'EOF'
import sys, yaml
path, shared = sys.argv[1], sys.argv[2] == "1"
with open(path) as f:
    doc = yaml.safe_load(f)
for svc in doc["services"].values():
    if svc.get("network_mode") == "host":
        svc.pop("ports", None)
    if not shared:
        for key in ("PROFILE_LOOKUP__REDIS__URL", "PROFILE_LOOKUP__REDIS__REQUIRED"):
            (svc.get("environment") or {}).pop(key, None)
with open(path, "w") as f:
    yaml.safe_dump(doc, f, sort_keys=False)
EOF
COMPOSE_UP=1
"${COMPOSE[@]}" up -d --no-build >"$T/compose-up.log" 2>&1 || {
    cat "$T/compose-up.log" >&2; die "docker-compose up failed"; }
container() { "${COMPOSE[@]}" ps -q "$1"; }
status_of() { # status_of URL [curl args...]: the HTTP status, 000 when nothing answered
    local url=$1; shift
    curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$@" "$url" || true
}
wait_200() { # wait_200 URL SECONDS
    local deadline=$((SECONDS + $2))
    while ((SECONDS < deadline)); do
        [[ $(status_of "$1") == 200 ]] && return 0
        sleep 0.2
    done
    return 1
}
for port in "${REPLICA_PORTS[@]}" "$HTTP_PORT"; do
    wait_200 "http://127.0.0.1:$port/readyz" 60 || {
        "${COMPOSE[@]}" logs --no-color --tail 20 >&2 || true
        die "127.0.0.1:$port/readyz did not answer 200 within 60 s"; }
done
# And the image's HEALTHCHECK (every 10 s) has passed on every replica.
for svc in replica-1 replica-2 replica-3; do
    for _ in $(seq 60); do
        [[ $(docker inspect -f '{{.State.Health.Status}}' "$(container "$svc")") == healthy ]] && break
        sleep 0.5
    done
done
nets=$(docker network ls -q --filter "label=com.docker.compose.project=$PROJECT" | wc -l)
figure "fleet: $("${COMPOSE[@]}" ps --services | tr '\n' ' ')up; compose networks created: $nets"

# --- checks ------------------------------------------------------------------------------
phase "check: health"
bad=0 statuses=()
for port in "${REPLICA_PORTS[@]}"; do
    for path in healthz readyz; do
        s=$(status_of "http://127.0.0.1:$port/$path"); statuses+=("$port/$path=$s")
        [[ $s == 200 ]] || bad=1
    done
done
check "replicas /healthz /readyz" "$bad" "${statuses[*]}"
bad=0 counts=""
for _ in $(seq 6); do
    for path in healthz readyz; do
        [[ $(status_of "http://127.0.0.1:$HTTP_PORT/$path") == 200 ]] || bad=1
    done
done
for port in "${REPLICA_PORTS[@]}"; do
    counts+=" $port:$(docker logs "$(container nginx)" 2>/dev/null | grep -c "upstream=127.0.0.1:$port ")"
done
check "through nginx, 12 health probes" "$bad" "all 200; answered per replica:$counts"
s=$(status_of "http://127.0.0.1:$HTTP_PORT/photo-share/profile/fleet.check" -H "Authorization: Bearer $KEY")
check "a lookup through nginx" "$([[ $s == 404 ]]; echo $?)" \
    "$s (profile_not_found from the stand-in upstream; expected 404)"
healthy=()
for svc in replica-1 replica-2 replica-3; do
    healthy+=("$svc=$(docker inspect -f '{{.State.Health.Status}}' "$(container "$svc")")")
done
figure "docker HEALTHCHECK: ${healthy[*]}"
uids=$(docker top "$(container replica-1)" -o pid,uid,comm | awk 'NR > 1 {print $2 "(" $3 ")"}' | paste -sd ' ' -)
check "replica process runs as uid 10001" "$([[ $uids == "10001(profile-lookup)" ]]; echo $?)" "$uids"

phase "check: one quota"
# QUOTA_REQUESTS lookups with one key, evenly spread over QUOTA_SECONDS (so the refill counts,
# not just the burst), 8 connections, round robin through nginx. One replica allows burst +
# elapsed × rate; three replicas on their own state would allow about 3 × that.
python3 - "$HTTP_PORT" "$QUOTA_KEY" "$QUOTA_REQUESTS" "$QUOTA_SECONDS" >"$T/quota.txt" <<'EOF'
import collections, concurrent.futures, http.client, json, sys, time
port, key, n, span = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
def one(i):
    time.sleep(max(0.0, t0 + i * span / n - time.monotonic()))
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("GET", "/photo-share/profile/quota.check", headers={"Authorization": "Bearer " + key})
    r = c.getresponse()
    body = r.read()
    code = ""
    try:
        code = json.loads(body).get("code", "")
    except ValueError:
        pass
    c.close()
    return r.status, code, r.getheader("RateLimit") or ""
t0 = time.monotonic()
with concurrent.futures.ThreadPoolExecutor(8) as pool:
    results = list(pool.map(one, range(n)))
elapsed = time.monotonic() - t0
limited = sum(1 for s, c, _ in results if s == 429 and c == "rate_limited")
kinds = collections.Counter("%d %s" % (s, c) for s, c, _ in results)
print("%d %d %.3f" % (n - limited, limited, elapsed))
print("; ".join("%s ×%d" % kv for kv in sorted(kinds.items())))
print(results[-1][2])
EOF
read -r allowed limited elapsed <"$T/quota.txt"
kinds=$(sed -n 2p "$T/quota.txt")
last_header=$(sed -n 3p "$T/quota.txt")
one=$(echo "$BURST + $elapsed * $PER_MINUTE / 60" | bc -l)
# Shared state: the fleet allows what one replica would. --no-redis: each replica its own
# quota, and round robin gives each a third of the requests, so about 3 × that.
if ((SHARED)); then want=$one what="one replica would allow"; else
    want=$(echo "3 * $one" | bc -l) what="3 replicas on their own state would allow"; fi
# ±5 %, and never tighter than one request (the counts are whole requests).
tol=$(echo "t = $want * 0.05; if (t < 1) t = 1; t" | bc -l)
ok=$(echo "d = $allowed - $want; if (d < 0) d = -d; d <= $tol" | bc -l)
figure "quota: $QUOTA_REQUESTS lookups, one key, spread over ${elapsed} s through nginx:" \
    "$allowed allowed, $limited rate_limited ($kinds); last RateLimit: $last_header"
figure "quota: one replica would allow $(printf '%.1f' "$one") (burst $BURST + ${elapsed} s ×" \
    "$PER_MINUTE/min); 3 replicas on their own state about $(printf '%.1f' "$(echo "3 * $one" | bc -l)")"
counts=""
for port in "${REPLICA_PORTS[@]}"; do
    counts+=" $port:$(docker logs "$(container nginx)" 2>/dev/null | grep 'quota.check' | grep -c "upstream=127.0.0.1:$port ")"
done
figure "quota: lookups per replica (nginx log):$counts"
check "$([[ $SHARED == 1 ]] && echo "one quota across 3 replicas" || echo "a quota per replica (no Redis)")" \
    "$([[ $ok == 1 ]]; echo $?)" \
    "$allowed allowed; $what $(printf '%.1f' "$want") ± $(printf '%.1f' "$tol")"
fetches=$(grep -c 'username=quota.check' "$T/upstream.log" || true)
figure "upstream requests for those $QUOTA_REQUESTS lookups of one name: $fetches" \
    "(one cache for the fleet: 1; a cache per replica: up to 3)"

if ((SHARED)); then
    phase "check: redis down"
    # The promise: Redis down → each replica goes on with its own state, no request fails, /readyz stays
    # ready; Redis back → used again within 5 s.
    docker stop -t 5 "$(container redis)" >/dev/null
    bad=0 codes=()
    for i in $(seq 9); do
        s=$(status_of "http://127.0.0.1:$HTTP_PORT/photo-share/profile/redis.down$i" -H "Authorization: Bearer $REDIS_KEY")
        codes+=("$s"); [[ $s == 404 ]] || bad=1
    done
    for port in "${REPLICA_PORTS[@]}"; do
        s=$(status_of "http://127.0.0.1:$port/readyz"); codes+=("readyz:$s"); [[ $s == 200 ]] || bad=1
    done
    check "Redis stopped: lookups answered, replicas ready" "$bad" "${codes[*]}"
    figure "Redis stopped: profile_lookup_redis_up per replica: $(rig_redis_up "${REPLICA_PORTS[@]}")"
    # A replica finds Redis again on its next call after its back-off (1 s), so lookups keep
    # coming (10 a second, round robin, in the background) while each replica's gauge is
    # watched; the time counts from when Redis answers PING again.
    python3 - "$HTTP_PORT" "$REDIS_KEY" "$T/traffic.stop" <<'EOF' &
import http.client, os, sys, time
port, key, stop = int(sys.argv[1]), sys.argv[2], sys.argv[3]
deadline, n = time.monotonic() + 20, 0
while time.monotonic() < deadline and not os.path.exists(stop):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        c.request("GET", "/photo-share/profile/redis.back%d" % n,
                  headers={"Authorization": "Bearer " + key})
        c.getresponse().read()
        c.close()
    except OSError:
        pass
    n += 1
    time.sleep(0.1)
EOF
    traffic=$!
    PIDS+=("$traffic")
    docker start "$(container redis)" >/dev/null
    t_start=$(date +%s.%N) t_pong=""
    while (($(echo "$(date +%s.%N) - $t_start < 10" | bc))); do
        rig_redis_ping "$REDIS_PORT" && { t_pong=$(date +%s.%N); break; }
        sleep 0.05
    done
    [[ -n $t_pong ]] || die "Redis did not answer PING within 10 s of docker start"
    back=""
    while (($(echo "$(date +%s.%N) - $t_pong < 10" | bc))); do
        if [[ $(rig_redis_up "${REPLICA_PORTS[@]}") == 1,1,1 ]]; then back=$(echo "$(date +%s.%N) - $t_pong" | bc); break; fi
        sleep 0.1
    done
    touch "$T/traffic.stop"
    wait "$traffic" || true
    errs=$(curl -s --max-time 5 "http://127.0.0.1:$R1_PORT/metrics" \
        | awk '/^profile_lookup_redis_errors_total/ {s += $2} END {print s + 0}')
    check "back on Redis within 5 s" "$([[ -n $back ]] && (($(echo "$back <= 5" | bc))); echo $?)" \
        "all 3 replicas redis_up=1 $(if [[ -n $back ]]; then printf '%.1f s' "$back"; else echo "not within 10 s"; fi) after Redis answered PING again ($(echo "$t_pong - $t_start" | bc | xargs printf '%.1f') s after docker start), lookups coming 10/s; replica-1 redis_errors_total $errs"
fi

phase "check: SIGTERM drain"
victim=$(container replica-2)
# A lookup in flight on replica-2 (the upstream holds it DRAIN_HOLD_S s), then SIGTERM.
( curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 30 \
    -H "Authorization: Bearer $DRAIN_KEY" "http://127.0.0.1:$R2_PORT/photo-share/profile/slow.drain" \
    >"$T/inflight.txt" 2>/dev/null || true ) &
inflight=$!
for _ in $(seq 50); do grep -q 'username=slow.drain' "$T/upstream.log" && break; sleep 0.1; done
t0=$(date +%s.%N)
( docker stop -t 30 "$victim" >/dev/null; date +%s.%N >"$T/stopped.txt" ) &
stopper=$!
# While it drains: its own port, and nginx.
first_not_ready=""
ngx_bad=0 ngx_n=0 ngx_codes=()
while kill -0 "$stopper" 2>/dev/null; do
    s=$(status_of "http://127.0.0.1:$R2_PORT/readyz")
    if [[ -z $first_not_ready && $s != 200 ]]; then
        first_not_ready="$s$([[ $s == 000 ]] && echo " (connection refused)") after $(echo "$(date +%s.%N) - $t0" | bc | xargs printf '%.2f') s"
    fi
    for path in healthz "photo-share/profile/drain.check$ngx_n"; do
        s=$(status_of "http://127.0.0.1:$HTTP_PORT/$path" -H "Authorization: Bearer $DRAIN_KEY")
        ngx_n=$((ngx_n + 1)) ngx_codes+=("$s")
        # 429: this key's quota (a lookup every ~0.1 s), an answer like any other.
        [[ $s == 200 || $s == 404 || $s == 429 ]] || ngx_bad=$((ngx_bad + 1))
    done
    sleep 0.1
done
wait "$stopper" || true
wait "$inflight" || true
stop_s=$(echo "$(cat "$T/stopped.txt") - $t0" | bc)
exit_code=$(docker inspect -f '{{.State.ExitCode}}' "$victim")
read -r inflight_status inflight_time <"$T/inflight.txt" || true
logs=$(docker logs "$victim" 2>&1 | grep -E 'shutting down|all connections closed|grace period over' \
    | sed -E 's/.*"message":"([^"]*)".*/\1/' | paste -sd ';' -)
check "in-flight request finished" "$([[ ${inflight_status:-} == 404 ]]; echo $?)" \
    "${inflight_status:-none} after ${inflight_time:-?} s (upstream held it ${DRAIN_HOLD_S} s)"
check "replica-2 not ready during the drain" "$([[ -n $first_not_ready ]]; echo $?)" \
    "/readyz on its port: ${first_not_ready:-200 throughout}; its log: $logs"
check "exit 0 within the grace" "$([[ $exit_code == 0 ]] && (($(echo "$stop_s < 30" | bc))); echo $?)" \
    "exit $exit_code, $(printf '%.2f' "$stop_s") s after docker stop (stop_grace_period 30 s)"
for _ in $(seq 9); do
    s=$(status_of "http://127.0.0.1:$HTTP_PORT/healthz")
    ngx_n=$((ngx_n + 1)) ngx_codes+=("$s")
    [[ $s == 200 ]] || ngx_bad=$((ngx_bad + 1))
done
check "nginx serving through the drain and after" "$([[ $ngx_bad == 0 ]]; echo $?)" \
    "$ngx_n requests, $ngx_bad failed (no answer or 5xx); statuses: $(printf '%s\n' "${ngx_codes[@]}" \
    | sort | uniq -c | awk '{printf "%s%s×%s", sep, $2, $1; sep=" "}')"

phase_end
((${#FAILED[@]} == 0)) || exit 1
