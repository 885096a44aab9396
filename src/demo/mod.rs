//! `profile-lookup demo`: the real service against a built-in sample upstream on loopback.
pub mod samples;
pub mod upstream;

/// PLACEHOLDER
pub async fn run(_listen: std::net::SocketAddr, _shutdown: impl Future<Output = ()>) -> std::io::Result<()> {
    Ok(())
}
