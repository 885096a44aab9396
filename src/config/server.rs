//! `[server]`: the listening socket, and how much a client may send and take.

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

use super::Section;
use super::limits::{self, HOUR_MS, MIB, n, range};

/// `[server]`
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// Address to listen on.
    pub listen: SocketAddr,
    /// How long a client may take to send a request's headers (also the idle keep-alive limit).
    pub header_read_timeout_ms: u64,
    /// The deadline for a whole request, upstream work included.
    pub request_timeout_ms: u64,
    /// Largest request head (request line and headers) accepted, in bytes.
    pub max_header_bytes: usize,
    /// Most header fields accepted in one request.
    pub max_headers: usize,
    /// Requests handled at once; more are shed with 503.
    pub max_in_flight: usize,
    /// How long shutdown waits for in-flight requests.
    pub shutdown_grace_ms: u64,
    /// How long, after SIGTERM, `/readyz` answers 503 while requests are still served, before
    /// the listener closes: the time a load balancer needs to see the replica leave.
    pub drain_delay_ms: u64,
}

impl Section for ServerConfig {
    fn check(&self) -> Result<(), String> {
        limits::check(&[
            range(
                "server.header_read_timeout_ms",
                self.header_read_timeout_ms,
                1,
                HOUR_MS,
                "1 hour",
            ),
            range(
                "server.request_timeout_ms",
                self.request_timeout_ms,
                1,
                HOUR_MS,
                "1 hour",
            ),
            range(
                "server.max_header_bytes",
                n(self.max_header_bytes),
                8192,
                MIB,
                "1 MiB",
            ),
            range(
                "server.max_headers",
                n(self.max_headers),
                1,
                10_000,
                "10000",
            ),
            range(
                "server.max_in_flight",
                n(self.max_in_flight),
                1,
                1_000_000,
                "a million",
            ),
            range(
                "server.shutdown_grace_ms",
                self.shutdown_grace_ms,
                0,
                HOUR_MS,
                "1 hour",
            ),
            range(
                "server.drain_delay_ms",
                self.drain_delay_ms,
                0,
                HOUR_MS,
                "1 hour",
            ),
        ])
    }
}
