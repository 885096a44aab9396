//! The one line `serve` logs when it starts: which build runs with which settings, so that a
//! log read later says what the replica was (never a key, a password or a proxy's address).

use crate::build_info::{COMMIT, FEATURES, VERSION};
use crate::config::proxies::is_gateway;
use crate::config::{RedisTarget, Settings, Sources, words};
use crate::registry::Platform;

/// Logs the start-up summary at INFO, its facts as fields: version, commit, features, the
/// configuration's layers, the number of API keys, Redis (`shared HOST:PORT` or `alone`),
/// fixed proxies and gateways, the sources per platform, the canary and the client.
pub fn log_start(settings: &Settings, sources: &Sources) {
    let keys = settings.auth.api_keys.len() + settings.auth.api_key_sha256.len();
    let lists = std::iter::once(&settings.upstream.proxies)
        .chain(Platform::ALL.iter().map(|&p| &settings.platform(p).proxies));
    let mut routes: Vec<&String> = lists.flatten().collect();
    routes.sort();
    routes.dedup();
    let gateways = routes.iter().filter(|raw| is_gateway(raw)).count();
    let per_platform: Vec<String> = Platform::ALL
        .iter()
        .map(|&p| format!("{}={}", p.section(), settings.platform(p).sources.join(",")))
        .collect();
    tracing::info!(
        version = VERSION,
        commit = COMMIT,
        features = FEATURES,
        config_sources = %sources.layers().join(", "),
        api_keys = keys,
        redis = %redis(settings),
        proxies = routes.len() - gateways,
        gateways,
        sources = %per_platform.join(" "),
        canary = if settings.canary.is_on() { "on" } else { "off" },
        client = words::name(settings.upstream.client),
        "starting"
    );
}

/// `alone`, or `shared` and the host:port of each Redis URL (no user, no password).
fn redis(settings: &Settings) -> String {
    let urls = match settings.redis.target() {
        Ok(Some(RedisTarget::Single(url))) => vec![url],
        Ok(Some(RedisTarget::Cluster(nodes))) => nodes,
        _ => return "alone".to_owned(),
    };
    let hosts: Vec<String> = urls
        .iter()
        .filter_map(|u| url::Url::parse(u).ok())
        .map(|u| {
            let host = u.host_str().unwrap_or("?").to_owned();
            match u.port_or_known_default() {
                Some(port) => format!("{host}:{port}"),
                None => host,
            }
        })
        .collect();
    format!("shared {}", hosts.join(","))
}
