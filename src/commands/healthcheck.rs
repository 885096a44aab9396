//! `healthcheck`: a dependency-free probe of a local instance's `/healthz`, for container
//! `HEALTHCHECK`s (the runtime image has no curl).

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
use std::process::ExitCode;
use std::time::Duration;

use crate::config::Settings;

/// How long the probe may take to connect, and then to read the status line.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Exit 0 if the instance at `addr` answers `GET /healthz` with 200. Without `addr` it asks
/// where `serve` listens (config file, `PROFILE_LOOKUP__SERVER__LISTEN`), so an operator who
/// moves the port does not get an unhealthy container.
pub fn healthcheck(addr: Option<SocketAddr>) -> ExitCode {
    let addr = match addr {
        Some(addr) => addr,
        None => match Settings::load(None) {
            Ok(settings) => settings.server.listen,
            Err(err) => {
                eprintln!("profile-lookup healthcheck: {err}");
                return ExitCode::from(2);
            }
        },
    };
    match probe(loopback_for(addr)) {
        Ok(true) => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
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

/// Whether `GET /healthz` at `addr` answers a 200 status line within the timeouts.
fn probe(addr: SocketAddr) -> std::io::Result<bool> {
    let mut stream = TcpStream::connect_timeout(&addr, PROBE_TIMEOUT)?;
    stream.set_read_timeout(Some(PROBE_TIMEOUT))?;
    stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")?;
    let mut head = [0u8; 12];
    stream.read_exact(&mut head)?;
    Ok(&head == b"HTTP/1.1 200")
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
