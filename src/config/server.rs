//! `[server]`: the listening socket, and how much a client may send and take.

use std::net::{IpAddr, SocketAddr};

use ipnet::IpNet;

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
    /// The load balancers and reverse proxies in front of the service (IPs or CIDRs): a
    /// connection from one of them has its client address read from `X-Forwarded-For`.
    pub trusted_proxies: Vec<String>,
}

/// The most `server.trusted_proxies` entries (each is compared with every hop of a header).
pub const MAX_TRUSTED_PROXIES: usize = 1000;

impl ServerConfig {
    /// `server.trusted_proxies` as networks (a bare IP is its own /32 or /128); an entry that is
    /// neither is an error naming it and its position.
    pub fn trusted_networks(&self) -> Result<Vec<IpNet>, String> {
        if self.trusted_proxies.len() > MAX_TRUSTED_PROXIES {
            return Err(format!(
                "server.trusted_proxies lists {} entries; at most {MAX_TRUSTED_PROXIES}",
                self.trusted_proxies.len()
            ));
        }
        self.trusted_proxies
            .iter()
            .enumerate()
            .map(|(i, entry)| {
                let entry = entry.trim();
                entry
                    .parse::<IpNet>()
                    .map(|net| net.trunc())
                    .or_else(|_| entry.parse::<IpAddr>().map(IpNet::from))
                    .map_err(|_| {
                        format!(
                            "server.trusted_proxies[{i}] = {entry:?} is not an IP address or a \
                             CIDR block (such as \"192.0.2.7\", \"10.0.0.0/8\" or \
                             \"2001:db8::/32\"); host names are not accepted"
                        )
                    })
            })
            .collect()
    }
}

impl Section for ServerConfig {
    fn check(&self) -> Result<(), String> {
        self.trusted_networks()?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn with(entries: &[&str]) -> ServerConfig {
        ServerConfig {
            trusted_proxies: entries.iter().map(|e| (*e).to_owned()).collect(),
            ..ServerConfig::default()
        }
    }

    #[test]
    fn trusted_proxies_are_ips_or_cidrs_and_nothing_else() {
        let nets = with(&["192.0.2.7", "10.1.2.3/8", "2001:db8::/32"])
            .trusted_networks()
            .unwrap();
        let shown: Vec<String> = nets.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["192.0.2.7/32", "10.0.0.0/8", "2001:db8::/32"]);
        assert!(with(&[]).check().is_ok(), "none by default");
        for bad in ["localhost", "10.0.0.0/33", "", "192.0.2.7:80"] {
            let err = with(&["10.0.0.1", bad]).check().unwrap_err();
            assert!(err.contains("server.trusted_proxies[1]"), "{bad}: {err}");
            assert!(err.contains("CIDR"), "{bad}: {err}");
        }
        let many = vec!["10.0.0.1"; MAX_TRUSTED_PROXIES + 1];
        assert!(with(&many).check().unwrap_err().contains("at most"));
    }
}
