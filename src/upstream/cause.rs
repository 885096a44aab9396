//! Why a request got no answer, as one of a few words: the category of a transport failure
//! that the log line, the metric label, the problem's `detail` and the canary's reason share.
//!
//! The category is read from the error and its whole `source()` chain (the client's, hyper's,
//! the OS's, the TLS library's): the kind of an I/O error where one is in the chain, else the
//! words the connector uses. It never holds an address, a host or a credential, so it may go
//! anywhere, and the set is closed, so a metric labelled by it stays small.

use std::error::Error;
use std::io::ErrorKind;

/// The category of a transport failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cause {
    /// The platform's host name did not resolve.
    Dns,
    /// The connection was refused (nothing listens there).
    Refused,
    /// The connection was reset or closed before the answer was complete.
    Reset,
    /// The TLS handshake failed (a certificate not trusted, not TLS at all).
    Tls,
    /// No connection or no answer within the deadline.
    Timeout,
    /// The proxy failed: down, its name did not resolve, or it refused the tunnel.
    Proxy,
    /// Anything else.
    Other,
}

impl Cause {
    /// Every category, for metrics registered at zero.
    pub const ALL: [Cause; 7] = [
        Cause::Dns,
        Cause::Refused,
        Cause::Reset,
        Cause::Tls,
        Cause::Timeout,
        Cause::Proxy,
        Cause::Other,
    ];

    /// The category's label: the log field's value and the metric's.
    pub fn label(self) -> &'static str {
        match self {
            Cause::Dns => "dns",
            Cause::Refused => "refused",
            Cause::Reset => "reset",
            Cause::Tls => "tls",
            Cause::Timeout => "timeout",
            Cause::Proxy => "proxy",
            Cause::Other => "other",
        }
    }

    /// The category in words, for a caller's `detail` and the canary's reason.
    pub fn words(self) -> &'static str {
        match self {
            Cause::Dns => "the platform's host name did not resolve",
            Cause::Refused => "the connection was refused",
            Cause::Reset => "the connection was reset",
            Cause::Tls => "the TLS handshake failed",
            Cause::Timeout => "no answer in time",
            Cause::Proxy => "the proxy failed",
            Cause::Other => "the connection failed",
        }
    }

    /// The category of `err`, a failure while the connection was being made (`connecting`:
    /// TCP, a proxy's CONNECT, TLS) or after the request went out, on a route through a proxy
    /// (`proxied`) or straight. Through a proxy, a name that does not resolve, a refusal, a
    /// reset or a time-out while connecting are the proxy's (it resolves and connects to the
    /// platform itself); a failed TLS handshake is still the platform's.
    pub fn of(err: &(dyn Error + 'static), connecting: bool, proxied: bool) -> Cause {
        let cause = Self::read(err);
        let the_proxys = matches!(
            cause,
            Cause::Dns | Cause::Refused | Cause::Reset | Cause::Timeout
        );
        if proxied && connecting && the_proxys {
            Cause::Proxy
        } else {
            cause
        }
    }

    /// The category the chain of `err` names, whoever's it is.
    fn read(err: &(dyn Error + 'static)) -> Cause {
        let mut kind = None;
        let mut text = String::new();
        let mut next = Some(err);
        while let Some(e) = next {
            if let Some(io) = e.downcast_ref::<std::io::Error>() {
                // The innermost I/O error is the OS's own word.
                kind = Some(io.kind());
            }
            text.push_str(&e.to_string().to_ascii_lowercase());
            text.push('\n');
            next = e.source();
        }
        let says = |words: &[&str]| words.iter().any(|w| text.contains(w));
        if says(&["tunnel", "proxy", "socks"]) {
            Cause::Proxy
        } else if says(&[
            "dns error",
            "failed to lookup address",
            "name or service not known",
            "no address associated",
            "temporary failure in name resolution",
        ]) {
            Cause::Dns
        } else if kind == Some(ErrorKind::ConnectionRefused) || says(&["connection refused"]) {
            Cause::Refused
        } else if says(&[
            // rustls (the plain client) and BoringSSL (the browser client) in their words.
            "certificate",
            "tls",
            "ssl",
            "handshake",
            "corrupt message",
            "wrong_version_number",
        ]) || kind == Some(ErrorKind::InvalidData)
        {
            Cause::Tls
        } else if matches!(
            kind,
            Some(
                ErrorKind::ConnectionReset
                    | ErrorKind::ConnectionAborted
                    | ErrorKind::BrokenPipe
                    | ErrorKind::UnexpectedEof
            )
        ) || says(&[
            "connection reset",
            "broken pipe",
            "connection closed before message completed",
            "unexpected eof",
        ]) {
            Cause::Reset
        } else if kind == Some(ErrorKind::TimedOut) || says(&["timed out"]) {
            Cause::Timeout
        } else {
            Cause::Other
        }
    }
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error with a source, as a client wraps the OS's.
    #[derive(Debug)]
    struct Wrapped(&'static str, std::io::Error);

    impl std::fmt::Display for Wrapped {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl Error for Wrapped {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            Some(&self.1)
        }
    }

    fn io(kind: ErrorKind, text: &'static str) -> std::io::Error {
        std::io::Error::new(kind, text)
    }

    #[test]
    fn the_chain_names_the_category() {
        for (err, expected) in [
            (
                Wrapped(
                    "client error (Connect)",
                    io(ErrorKind::ConnectionRefused, "x"),
                ),
                Cause::Refused,
            ),
            (
                Wrapped(
                    "dns error",
                    io(ErrorKind::Other, "failed to lookup address"),
                ),
                Cause::Dns,
            ),
            (
                Wrapped("connection error", io(ErrorKind::ConnectionReset, "x")),
                Cause::Reset,
            ),
            (
                Wrapped("x", io(ErrorKind::InvalidData, "invalid peer certificate")),
                Cause::Tls,
            ),
            (
                Wrapped("unsuccessful tunnel", io(ErrorKind::Other, "x")),
                Cause::Proxy,
            ),
            (Wrapped("x", io(ErrorKind::TimedOut, "x")), Cause::Timeout),
            (Wrapped("x", io(ErrorKind::Other, "x")), Cause::Other),
        ] {
            assert_eq!(Cause::of(&err, true, false), expected, "{err:?}");
        }
    }

    #[test]
    fn the_metric_knows_every_label() {
        let labels = Cause::ALL.map(Cause::label);
        assert_eq!(labels, crate::telemetry::FAILURE_CAUSES);
    }

    #[test]
    fn through_a_proxy_connecting_failures_are_the_proxys_but_tls_is_not() {
        let refused = Wrapped("x", io(ErrorKind::ConnectionRefused, "x"));
        assert_eq!(Cause::of(&refused, true, true), Cause::Proxy);
        assert_eq!(Cause::of(&refused, false, true), Cause::Refused);
        let tls = Wrapped("x", io(ErrorKind::InvalidData, "x"));
        assert_eq!(Cause::of(&tls, true, true), Cause::Tls);
    }
}
