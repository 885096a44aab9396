# Multi-stage build: compile with the full toolchain, run on a slim base as a non-root user.
# Needs BuildKit (Docker's default builder since 23.0; `DOCKER_BUILDKIT=1` on 20.10) for the
# cache mounts below:
#   docker build -t profile-lookup:0.1.0 .
# The tag is the crate's version (Cargo.toml), the one the compose files and the Kubernetes base
# name; scripts/kubernetes-check.sh fails when they part.
FROM rust:1.95-bookworm AS build
# The image is built with the browser-grade upstream client (`--features browser`): BoringSSL is
# compiled from source by cmake and bound with bindgen (libclang); git applies its patches.
RUN apt-get update \
 && apt-get install -y --no-install-recommends cmake clang libclang-dev git \
 && rm -rf /var/lib/apt/lists/*
# The sources are bind-mounted, not copied (no layer holds them), and the target dir and the
# crate downloads live in cache mounts, so a rebuild after a change compiles only what changed
# and no layer carries the gigabytes of a target dir.
RUN --mount=type=bind,target=/src \
    --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/target \
    cd /src \
 && cargo build --release --locked --features browser --bin profile-lookup --target-dir /target \
 && install -m 0755 /target/release/profile-lookup /usr/local/bin/profile-lookup

FROM debian:bookworm-slim
# The drift-capture folder (upstream.capture_dir) exists in the image, owned by the service's
# uid, so a volume mounted there (compose's named volume starts as a copy of it) is writable.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin app \
 && install -d -o 10001 -g 10001 -m 0750 /var/lib/profile-lookup/captures
COPY --from=build /usr/local/bin/profile-lookup /usr/local/bin/profile-lookup
USER 10001
# Configuration comes from the environment (PROFILE_LOOKUP__SECTION__KEY), e.g.
#   -e PROFILE_LOOKUP__AUTH__API_KEY_SHA256=<hex digest>
#   -e PROFILE_LOOKUP__REDIS__URL=redis://redis:6379/0     (a fleet sharing its state)
# The upstream client defaults to the browser-grade one this image is built with;
# PROFILE_LOOKUP__UPSTREAM__CLIENT=plain selects rustls. On SIGTERM the replica keeps serving
# for server.drain_delay_ms (5 s here, 0 outside a container) while /readyz answers 503, so a
# load balancer sees it leave before its listener closes.
ENV PROFILE_LOOKUP__SERVER__LISTEN=0.0.0.0:8080 \
    PROFILE_LOOKUP__LOG__FORMAT=json \
    PROFILE_LOOKUP__UPSTREAM__CLIENT=browser \
    PROFILE_LOOKUP__SERVER__DRAIN_DELAY_MS=5000
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["/usr/local/bin/profile-lookup", "healthcheck"]
# The binary is PID 1 and handles SIGTERM itself: /readyz fails while requests are still
# served for server.drain_delay_ms (5 s), then the listener closes, in-flight requests finish
# within server.shutdown_grace_ms (20 s), exit 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/profile-lookup"]
CMD ["serve"]
