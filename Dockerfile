# Multi-stage build: compile with the full toolchain, run on a slim base as a non-root user.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src src
COPY benches benches
RUN cargo build --release --locked --bin profile-lookup

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin app
COPY --from=build /src/target/release/profile-lookup /usr/local/bin/profile-lookup
USER 10001
# Configuration comes from the environment (PROFILE_LOOKUP__SECTION__KEY), e.g.
#   -e PROFILE_LOOKUP__AUTH__API_KEY_SHA256=<hex digest>
ENV PROFILE_LOOKUP__SERVER__LISTEN=0.0.0.0:8080 \
    PROFILE_LOOKUP__LOG__FORMAT=json
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["/usr/local/bin/profile-lookup", "healthcheck"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/profile-lookup"]
CMD ["serve"]
