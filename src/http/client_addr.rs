//! Who is calling, as the access log names them: the connection's own address, or, for a
//! connection from one of `server.trusted_proxies`, the right-most address of
//! `X-Forwarded-For` that is not one of them.
//!
//! `X-Forwarded-For` is caller text: anyone can send one. Only the hops the service's own
//! proxies appended can be believed, and each appends on the right, so the header is read from
//! the right, skipping trusted proxies, and the first other address is the client. Nothing
//! before it is looked at, so a caller cannot choose what is logged by sending a header of
//! its own. With no trusted proxy configured (the default) the header is never read.

use std::net::{IpAddr, SocketAddr};

use axum::http::HeaderMap;
use ipnet::IpNet;

/// The connection's peer, put on each request by the accept loop (`crate::server`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peer(pub SocketAddr);

/// The `X-Forwarded-For` header.
const X_FORWARDED_FOR: &str = "x-forwarded-for";

/// The most hops of `X-Forwarded-For` looked at, from the right: a longer chain is no proxy
/// setup of ours.
const MAX_HOPS: usize = 32;

/// `server.trusted_proxies`, parsed.
#[derive(Clone, Debug, Default)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// The networks whose `X-Forwarded-For` is believed.
    pub fn new(networks: Vec<IpNet>) -> Self {
        Self(networks)
    }

    fn trusts(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// The client of a request from `peer` with `headers`: `peer` itself unless it is a
    /// trusted proxy, else the right-most hop of `X-Forwarded-For` that is not (the left-most
    /// trusted hop when every one is, or the hop right of one that is not an address).
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = canonical(peer);
        if !self.trusts(peer) {
            return peer;
        }
        let mut client = peer;
        let hops = headers
            .get_all(X_FORWARDED_FOR)
            .iter()
            .rev()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.rsplit(','))
            .take(MAX_HOPS);
        for hop in hops {
            let Ok(ip) = hop.trim().parse::<IpAddr>() else {
                return client;
            };
            client = canonical(ip);
            if !self.trusts(client) {
                return client;
            }
        }
        client
    }
}

/// A client address as the log writes it: the address, or `-` when none is known.
#[derive(Clone, Copy, Debug)]
pub struct Shown(pub Option<IpAddr>);

impl std::fmt::Display for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(ip) => ip.fmt(f),
            None => f.write_str("-"),
        }
    }
}

/// `ip` with an IPv4 address mapped into IPv6 (`::ffff:192.0.2.7`) as the IPv4 address it is.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn trusted() -> TrustedProxies {
        TrustedProxies::new(vec![
            "10.0.0.0/8".parse().unwrap(),
            "192.0.2.7/32".parse().unwrap(),
        ])
    }

    fn xff(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append(X_FORWARDED_FOR, HeaderValue::from_str(v).unwrap());
        }
        headers
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_sends() {
        let headers = xff(&["203.0.113.9"]);
        assert_eq!(
            trusted().client(ip("198.51.100.1"), &headers),
            ip("198.51.100.1")
        );
        let none = TrustedProxies::default();
        assert_eq!(none.client(ip("10.1.2.3"), &headers), ip("10.1.2.3"));
    }

    #[test]
    fn through_trusted_proxies_the_right_most_untrusted_hop_is_the_client() {
        let peer = ip("10.1.2.3");
        // The caller forged the left-most entry; the proxies appended the rest.
        let headers = xff(&["1.1.1.1, 203.0.113.9, 10.9.9.9"]);
        assert_eq!(trusted().client(peer, &headers), ip("203.0.113.9"));
        // Several headers are one list, in order.
        let headers = xff(&["1.1.1.1", "203.0.113.9, 192.0.2.7"]);
        assert_eq!(trusted().client(peer, &headers), ip("203.0.113.9"));
        // Every hop trusted: the left-most of them.
        let headers = xff(&["10.0.0.2, 10.0.0.1"]);
        assert_eq!(trusted().client(peer, &headers), ip("10.0.0.2"));
        // No header: the proxy itself.
        assert_eq!(trusted().client(peer, &HeaderMap::new()), peer);
        // Garbage stops the walk at the last address believed.
        let headers = xff(&["203.0.113.9, not-an-ip, 10.0.0.5"]);
        assert_eq!(trusted().client(peer, &headers), ip("10.0.0.5"));
    }

    #[test]
    fn an_ipv4_mapped_peer_is_its_ipv4_address() {
        let mapped = ip("::ffff:10.1.2.3");
        let headers = xff(&["203.0.113.9"]);
        assert_eq!(trusted().client(mapped, &headers), ip("203.0.113.9"));
    }
}
