//! `healthcheck`: a dependency-free probe of a local instance's `/healthz`, for container
//! `HEALTHCHECK`s (the runtime image has no curl). A failed probe says why on stderr, where a
//! container runtime keeps it (`docker inspect` shows the health log).

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use crate::config::Settings;

/// How long the probe may take to connect, and then to read the status line.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Exit 0 if the instance at `addr` answers `GET /healthz` with 200, else 1 and why on
/// stderr. Without `addr` it asks where `serve` listens (`config`, else the same layers as
/// `serve`: `PROFILE_LOOKUP_CONFIG`, `PROFILE_LOOKUP__SERVER__LISTEN`), so an operator who
/// moves the port does not get an unhealthy container; settings it cannot load exit 2.
pub fn healthcheck(addr: Option<SocketAddr>, config: Option<&Path>) -> ExitCode {
    let addr = match addr {
        Some(addr) => addr,
        None => match Settings::load(config) {
            Ok(settings) => settings.server.listen,
            Err(err) => {
                eprintln!("profile-lookup healthcheck: {err}");
                return ExitCode::from(2);
            }
        },
    };
    let probed = loopback_for(addr);
    match probe(probed) {
        Ok(Answer::Healthy) => ExitCode::SUCCESS,
        Ok(Answer::Status(line)) => {
            eprintln!("profile-lookup healthcheck: {probed} answered GET /healthz with {line:?}");
            ExitCode::FAILURE
        }
        Err(err) => {
            eprintln!("profile-lookup healthcheck: {probed}: {}", why(&err));
            ExitCode::FAILURE
        }
    }
}

/// What the instance answered.
enum Answer {
    /// `HTTP/1.1 200`.
    Healthy,
    /// Another status line (as much of it as was read, lossily).
    Status(String),
}

/// A failed probe in an operator's words.
fn why(err: &std::io::Error) -> String {
    match err.kind() {
        ErrorKind::ConnectionRefused => "connection refused: nothing listens there".into(),
        ErrorKind::TimedOut | ErrorKind::WouldBlock => format!(
            "no answer within {} s (connected, or trying to)",
            PROBE_TIMEOUT.as_secs()
        ),
        ErrorKind::UnexpectedEof => "the connection closed before a status line".into(),
        _ => err.to_string(),
    }
}

/// `0.0.0.0` / `::` mean "every interface": the loopback one is probed.
fn loopback_for(addr: SocketAddr) -> SocketAddr {
    match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => (Ipv4Addr::LOCALHOST, addr.port()).into(),
        IpAddr::V6(ip) if ip.is_unspecified() => (Ipv6Addr::LOCALHOST, addr.port()).into(),
        _ => addr,
    }
}

/// What `GET /healthz` at `addr` answers within the timeouts.
fn probe(addr: SocketAddr) -> std::io::Result<Answer> {
    let mut stream = TcpStream::connect_timeout(&addr, PROBE_TIMEOUT)?;
    stream.set_read_timeout(Some(PROBE_TIMEOUT))?;
    stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")?;
    let mut head = [0u8; 12];
    stream.read_exact(&mut head)?;
    if &head == b"HTTP/1.1 200" {
        return Ok(Answer::Healthy);
    }
    // The rest of the status line, for the message (bounded: a line is short).
    let mut rest = [0u8; 64];
    let n = stream.read(&mut rest).unwrap_or(0);
    let line = [&head[..], &rest[..n]].concat();
    let line = String::from_utf8_lossy(&line);
    Ok(Answer::Status(
        line.lines().next().unwrap_or_default().to_owned(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_interface_is_probed_on_loopback() {
        let any: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        assert_eq!(loopback_for(any), "127.0.0.1:8080".parse().unwrap());
        let any6: SocketAddr = "[::]:9".parse().unwrap();
        assert_eq!(loopback_for(any6), "[::1]:9".parse().unwrap());
        let one: SocketAddr = "10.0.0.1:1".parse().unwrap();
        assert_eq!(loopback_for(one), one);
    }
}
