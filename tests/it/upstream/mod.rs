//! Talking to the platforms (`src/upstream`): broken upstreams, proxies, sessions, junk
//! headers, drift capture, the clients' fingerprints.

mod browser_client;
mod browser_profiles;
mod capture;
mod failure_causes;
mod failure_reports;
mod faults;
mod gateways;
mod junk_headers;
mod proxies;
mod proxy_blame;
mod route_sessions;
mod silent_route;
