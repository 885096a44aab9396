//! The typed configuration, its layering and its validation.
//!
//! Layers, later ones winning: the built-in defaults ([`Settings::default`]), then a TOML file
//! (`--config FILE` or `PROFILE_LOOKUP_CONFIG`), then environment variables
//! `PROFILE_LOOKUP__SECTION__KEY` (lists comma-separated). Unknown keys are errors, so a typo
//! in a key name stops the service instead of being silently ignored.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use config::{Config, Environment, File, FileFormat};
use serde::{Deserialize, Serialize};
use url::Url;

use crate::registry::Platform;

pub mod browser_profiles;
pub mod ca_file;
pub mod canary;
pub mod freshness;
mod limits;
pub mod proxies;
pub mod redis;
mod secret_list;

pub use browser_profiles::BrowserProfile;
pub use canary::CanaryConfig;
pub use freshness::Revalidate;
pub use redis::{RedisConfig, RedisTarget};

/// Environment variable naming the config file when `--config` is not given.
pub const CONFIG_ENV: &str = "PROFILE_LOOKUP_CONFIG";
/// Prefix of the per-key environment overrides.
pub const ENV_PREFIX: &str = "PROFILE_LOOKUP";

/// Everything the service can be told; see `config/default.toml` for each key's meaning.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Listening socket and server limits.
    pub server: ServerConfig,
    /// API keys.
    pub auth: AuthConfig,
    /// The per-key quota.
    pub rate_limit: RateLimitConfig,
    /// The short-video platform (each registered platform has its section; see
    /// [`Settings::platform`]).
    pub short_video: PlatformConfig,
    /// The photo-share platform.
    pub photo_share: PlatformConfig,
    /// Timeouts and size limits of every upstream request.
    pub upstream: UpstreamConfig,
    /// Retries of throttled photo-share requests.
    pub retry: RetryConfig,
    /// The profile cache.
    pub cache: CacheConfig,
    /// The per-platform circuit breaker.
    pub breaker: BreakerConfig,
    /// Log output.
    pub log: LogConfig,
    /// Where a fleet of replicas keeps its shared state (empty `url`: each keeps its own).
    pub redis: RedisConfig,
    /// The canary: accounts looked up through each source every interval.
    pub canary: CanaryConfig,
}

/// `[server]`
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
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

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            header_read_timeout_ms: 10_000,
            request_timeout_ms: 30_000,
            max_header_bytes: 16 * 1024,
            max_headers: 64,
            max_in_flight: 1024,
            shutdown_grace_ms: 20_000,
            drain_delay_ms: 0,
        }
    }
}

/// `[auth]`: keys in plaintext, or as hex SHA-256 digests so the config holds no secret.
///
/// Both lists are read by the private `secret_list` module, whose errors never show a value.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuthConfig {
    /// Plaintext keys.
    #[serde(deserialize_with = "secret_list::api_keys")]
    pub api_keys: Vec<String>,
    /// Hex SHA-256 digests of keys.
    #[serde(deserialize_with = "secret_list::api_key_sha256")]
    pub api_key_sha256: Vec<String>,
}

/// `[rate_limit]`: a GCRA quota per API key.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RateLimitConfig {
    /// Sustained requests per minute per key.
    pub per_key_per_minute: u32,
    /// Requests a key may send at once before the sustained rate applies.
    pub burst: u32,
}

impl Default for RateLimitConfig {
    fn default() -> Self {
        Self {
            per_key_per_minute: 60,
            burst: 20,
        }
    }
}

/// A platform's section (`[short_video]`, `[photo_share]`): where the platform is and how hard
/// we may knock.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PlatformConfig {
    /// The platform's base URL (scheme and host, optionally a port).
    pub base_url: Url,
    /// Outbound requests per second to the platform, sustained.
    pub requests_per_second: u32,
    /// Outbound requests allowed at once above the sustained rate.
    pub burst: u32,
    /// Outbound requests in flight to the platform at once.
    pub max_concurrency: usize,
    /// How long a lookup may wait for outbound budget before it is shed with 503.
    pub max_queue_ms: u64,
    /// This platform's own proxies; when non-empty they replace `upstream.proxies` for it.
    /// Read like a secret list: errors name a position, never a value (URLs hold passwords).
    #[serde(deserialize_with = "secret_list::proxies")]
    pub proxies: Vec<String>,
    /// The sources a lookup asks, in order (names from the platform's registry line); one
    /// left out is never asked.
    pub sources: Vec<String>,
    /// Whether page requests (navigations) carry 2 to 8 random extra headers, as browsers'
    /// extensions add: a request's header fingerprint then differs every time. Never on
    /// requests for JSON.
    pub junk_headers: bool,
}

impl PlatformConfig {
    /// The built-in section of `platform`, whose web host is `base`.
    fn of(platform: Platform, base: &str) -> Self {
        Self {
            base_url: Url::parse(base).expect("built-in base URL is valid"),
            requests_per_second: 20,
            burst: 40,
            max_concurrency: 16,
            max_queue_ms: 2_000,
            proxies: Vec::new(),
            sources: platform.sources().iter().map(|s| (*s).to_owned()).collect(),
            junk_headers: false,
        }
    }
}

impl Default for PlatformConfig {
    fn default() -> Self {
        Settings::default().short_video
    }
}

/// `[upstream]`
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UpstreamConfig {
    /// Total time for one upstream request: connect, headers and the whole body.
    pub timeout_ms: u64,
    /// Largest upstream body read, counted after decompression.
    pub max_body_bytes: usize,
    /// Which client speaks to the platforms.
    pub client: UpstreamClient,
    /// A PEM file of extra roots to trust (a TLS-inspecting proxy, tests); empty: none.
    pub ca_file: PathBuf,
    /// Forward proxies every platform goes through, in turn (`http://`, `https://`,
    /// `socks5h://`, `user:pass@` allowed); empty: straight out. Read like a secret list.
    #[serde(deserialize_with = "secret_list::proxies")]
    pub proxies: Vec<String>,
    /// How long a proxy rests after a block or a connection failure through it.
    pub proxy_cooldown_seconds: u64,
    /// The browsers the browser client presents, one per lookup in turn, the next after a
    /// block (ignored by the plain client).
    pub browser_profiles: Vec<BrowserProfile>,
    /// Where pages that could not be read are kept for `extract`; empty: nowhere.
    pub capture_dir: PathBuf,
    /// The most pages kept in `capture_dir` (the oldest go first).
    pub capture_max_files: usize,
}

impl UpstreamConfig {
    /// The configured `ca_file`, if any.
    pub fn ca_file(&self) -> Option<&Path> {
        (!self.ca_file.as_os_str().is_empty()).then_some(self.ca_file.as_path())
    }

    /// How long a proxy rests after a block or a connection failure through it.
    pub fn proxy_cooldown(&self) -> Duration {
        Duration::from_secs(self.proxy_cooldown_seconds)
    }

    /// The configured `capture_dir`, if drift capture is on.
    pub fn capture_dir(&self) -> Option<&Path> {
        (!self.capture_dir.as_os_str().is_empty()).then_some(self.capture_dir.as_path())
    }
}

impl Default for UpstreamConfig {
    fn default() -> Self {
        Self {
            timeout_ms: 10_000,
            max_body_bytes: 5 * 1024 * 1024,
            client: UpstreamClient::Plain,
            ca_file: PathBuf::new(),
            proxies: Vec::new(),
            proxy_cooldown_seconds: 300,
            browser_profiles: BrowserProfile::ALL.to_vec(),
            capture_dir: PathBuf::new(),
            capture_max_files: 100,
        }
    }
}

/// `upstream.client`: the platforms refuse clients whose handshakes are not a browser's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UpstreamClient {
    /// rustls over HTTP/1.1; needs nothing but a Rust toolchain to build.
    Plain,
    /// A current desktop browser's TLS and HTTP/2 fingerprint, one of
    /// `upstream.browser_profiles` per lookup (cargo feature `browser`).
    Browser,
}

/// `[retry]`: exponential backoff with full jitter for throttled photo-share requests.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RetryConfig {
    /// Upstream requests per lookup step, the first included.
    pub max_attempts: u32,
    /// The first backoff delay.
    pub base_delay_ms: u64,
    /// The largest single delay (also caps an upstream `Retry-After`).
    pub max_delay_ms: u64,
    /// The most time one lookup may spend on retries, sleeps included.
    pub max_total_ms: u64,
}

impl Default for RetryConfig {
    fn default() -> Self {
        Self {
            max_attempts: 4,
            base_delay_ms: 500,
            max_delay_ms: 8_000,
            max_total_ms: 20_000,
        }
    }
}

/// `[cache]`
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CacheConfig {
    /// Whether found profiles and not-found answers are kept at all.
    pub enabled: bool,
    /// How long a profile is served from the cache.
    pub ttl_seconds: u64,
    /// How long a not-found answer is served from the cache.
    pub negative_ttl_seconds: u64,
    /// How long past its TTL a profile may still be served when the platform fails.
    pub max_stale_seconds: u64,
    /// Most bytes of response bodies kept (each store), so giant profiles cannot exhaust memory.
    pub max_bytes: u64,
    /// How long past its TTL a found profile is still answered at once while one background
    /// refresh replaces it (stale-while-revalidate); `"auto"`: a fifth of `ttl_seconds`.
    pub revalidate_seconds: Revalidate,
    /// Hits during its life that make an entry hot: refreshed in the background shortly before
    /// it expires (0: never).
    pub hot_hits: u64,
    /// The most of each platform's outbound budget that background refreshes may use (0 to 1).
    pub refresh_share: f64,
}

impl CacheConfig {
    /// The stale-while-revalidate window in seconds: `revalidate_seconds` as configured, or a
    /// fifth of `ttl_seconds`.
    pub fn revalidate_window(&self) -> u64 {
        self.revalidate_seconds.seconds(self.ttl_seconds)
    }
}

impl Default for CacheConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            ttl_seconds: 600,
            negative_ttl_seconds: 120,
            max_stale_seconds: 3_600,
            max_bytes: 128 * 1024 * 1024,
            revalidate_seconds: Revalidate::Auto,
            hot_hits: 3,
            refresh_share: 0.2,
        }
    }
}

/// `[breaker]`
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BreakerConfig {
    /// Consecutive blocked lookups that open the breaker.
    pub failure_threshold: u32,
    /// How long an open breaker answers at once before letting a probe through.
    pub cooldown_seconds: u64,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        Self {
            failure_threshold: 5,
            cooldown_seconds: 30,
        }
    }
}

/// `[log]`
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogConfig {
    /// `"pretty"` for people, `"json"` for log pipelines.
    pub format: LogFormat,
    /// A tracing filter directive, e.g. `info` or `profile_lookup=debug`.
    pub level: String,
}

impl Default for LogConfig {
    fn default() -> Self {
        Self {
            format: LogFormat::Pretty,
            level: "info".into(),
        }
    }
}

/// The log line format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    Pretty,
    /// One JSON object per line.
    Json,
}

/// Why the configuration could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A layer could not be read or did not fit the schema.
    #[error("configuration could not be read: {0}")]
    Load(#[from] config::ConfigError),
    /// The values were read but make no sense together.
    #[error("invalid configuration: {0}")]
    Invalid(String),
    /// The config file named by `--config` or `PROFILE_LOOKUP_CONFIG` cannot be read.
    #[error(
        "cannot read the config file {}: {source}; check the path given with --config or \
         {CONFIG_ENV}",
        path.display()
    )]
    File {
        /// The path as given.
        path: std::path::PathBuf,
        /// Why it cannot be read.
        source: std::io::Error,
    },
}

impl Settings {
    /// Builds the settings from defaults, the optional TOML file and the environment.
    pub fn load(file: Option<&Path>) -> Result<Self, ConfigError> {
        let env_file = std::env::var_os(CONFIG_ENV);
        let file = file.or(env_file.as_deref().map(Path::new));
        let mut builder = Config::builder().add_source(Config::try_from(&Settings::default())?);
        if let Some(path) = file {
            // Read once here so a missing or unreadable file is named, with what to do.
            std::fs::read(path).map_err(|source| ConfigError::File {
                path: path.to_owned(),
                source,
            })?;
            let path = path.to_str().ok_or_else(|| {
                ConfigError::Invalid("the config file path is not valid UTF-8".into())
            })?;
            builder = builder.add_source(File::new(path, FileFormat::Toml).required(true));
        }
        let env = secret_list::Env::read()?;
        // Scalars are try-parsed (so `…__CACHE__ENABLED=false` is a bool); the key lists are
        // not: the env source would turn `8675309` into a number and `k1, k2` into " k2".
        let scalars = Environment::with_prefix(ENV_PREFIX)
            .prefix_separator("__")
            .separator("__")
            .try_parsing(true)
            .source(Some(env.scalars));
        builder = builder.add_source(scalars);
        for (key, items) in env.lists {
            builder = builder.set_override(key, items)?;
        }
        let settings: Settings = builder.build()?.try_deserialize()?;
        settings.validate()?;
        Ok(settings)
    }

    /// Checks values that parse but cannot work. `serve` also requires at least one key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |msg: String| Err(ConfigError::Invalid(msg));
        limits::check(self)?;
        for &platform in Platform::ALL {
            let (name, p) = (platform.section(), self.platform(platform));
            if !matches!(p.base_url.scheme(), "http" | "https") || p.base_url.host().is_none() {
                return bad(format!(
                    "{name}.base_url must be an http(s) URL with a host"
                ));
            }
            if p.base_url.query().is_some() || p.base_url.fragment().is_some() {
                return bad(format!("{name}.base_url must not have a query or fragment"));
            }
            if p.requests_per_second == 0 || p.burst == 0 || p.max_concurrency == 0 {
                return bad(format!(
                    "{name}.requests_per_second, burst and max_concurrency must be at least 1"
                ));
            }
            proxies::check_proxies(&format!("{name}.proxies"), &p.proxies)
                .map_err(ConfigError::Invalid)?;
            check_sources(platform, &p.sources).map_err(ConfigError::Invalid)?;
        }
        proxies::check_proxies("upstream.proxies", &self.upstream.proxies)
            .map_err(ConfigError::Invalid)?;
        browser_profiles::check(
            &self.upstream.browser_profiles,
            self.upstream.client == UpstreamClient::Browser,
        )
        .map_err(ConfigError::Invalid)?;
        if self.rate_limit.per_key_per_minute == 0 || self.rate_limit.burst == 0 {
            return bad(
                "rate_limit.per_key_per_minute and rate_limit.burst must be at least 1".into(),
            );
        }
        if let Some(path) = self.upstream.ca_file() {
            ca_file::read_pem_roots(path).map_err(|reason| {
                ConfigError::Invalid(format!("upstream.ca_file {}: {reason}", path.display()))
            })?;
        }
        self.redis.target().map_err(ConfigError::Invalid)?;
        freshness::check_refresh_share(self.cache.refresh_share).map_err(ConfigError::Invalid)?;
        canary::check(&self.canary).map_err(ConfigError::Invalid)?;
        if self.retry.max_attempts == 0 {
            return bad("retry.max_attempts counts the first request, so it is at least 1".into());
        }
        if self.retry.base_delay_ms > self.retry.max_delay_ms {
            return bad("retry.base_delay_ms must not exceed retry.max_delay_ms".into());
        }
        for (at, digest) in self.auth.api_key_sha256.iter().enumerate() {
            if parse_digest(digest).is_none() {
                return bad(format!(
                    "auth.api_key_sha256[{at}] must be 64 hex digits, the output of \
                     `printf %s \"$KEY\" | sha256sum` (the value is not shown)"
                ));
            }
        }
        if let Some(at) = self
            .auth
            .api_keys
            .iter()
            .position(|k| !secret_list::fits_bearer(k))
        {
            return bad(format!(
                "auth.api_keys[{at}] can never be sent as `Authorization: Bearer <key>`: a key \
                 is 1 to {} visible ASCII characters, without spaces (the key is not shown)",
                secret_list::MAX_KEY_BYTES
            ));
        }
        Ok(())
    }

    /// `validate`, plus the rule that a served API has at least one key.
    pub fn validate_for_serve(&self) -> Result<(), ConfigError> {
        self.validate()?;
        if self.upstream.client == UpstreamClient::Browser && !cfg!(feature = "browser") {
            return Err(ConfigError::Invalid(
                "upstream.client = \"browser\" needs a build with the browser-grade client: \
                 cargo build --release --features browser (it needs cmake and libclang)"
                    .into(),
            ));
        }
        if let Some(dir) = self.upstream.capture_dir() {
            writable_dir(dir).map_err(|e| {
                ConfigError::Invalid(format!(
                    "upstream.capture_dir {} cannot be used: {e}",
                    dir.display()
                ))
            })?;
        }
        if self.auth.api_keys.is_empty() && self.auth.api_key_sha256.is_empty() {
            return Err(ConfigError::Invalid(
                "no API key is configured: set auth.api_keys or auth.api_key_sha256 \
                 (or PROFILE_LOOKUP__AUTH__API_KEYS)"
                    .into(),
            ));
        }
        Ok(())
    }
}

impl Settings {
    /// The settings section of `platform` (`[short_video]`, …).
    pub fn platform(&self, platform: Platform) -> &PlatformConfig {
        match platform {
            Platform::ShortVideo => &self.short_video,
            Platform::PhotoShare => &self.photo_share,
        }
    }

    /// The settings section of `platform`, to change (the demo and the tests point every
    /// platform at their own loopback upstream).
    pub fn platform_mut(&mut self, platform: Platform) -> &mut PlatformConfig {
        match platform {
            Platform::ShortVideo => &mut self.short_video,
            Platform::PhotoShare => &mut self.photo_share,
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            server: ServerConfig::default(),
            auth: AuthConfig::default(),
            rate_limit: RateLimitConfig::default(),
            // Short-video pages carry junk headers by default (yt-dlp's 2026-08 fix for the
            // platform's 403s); photo-share's do not.
            short_video: PlatformConfig {
                junk_headers: true,
                ..PlatformConfig::of(Platform::ShortVideo, "https://www.tiktok.com")
            },
            photo_share: PlatformConfig::of(Platform::PhotoShare, "https://www.instagram.com"),
            upstream: UpstreamConfig::default(),
            retry: RetryConfig::default(),
            cache: CacheConfig::default(),
            breaker: BreakerConfig::default(),
            log: LogConfig::default(),
            redis: RedisConfig::default(),
            canary: CanaryConfig::default(),
        }
    }
}

/// `<section>.sources`: at least one, each a source of the platform, none twice.
fn check_sources(platform: Platform, sources: &[String]) -> Result<(), String> {
    let key = format!("{}.sources", platform.section());
    let known = platform.sources().join("\", \"");
    if sources.is_empty() {
        return Err(format!(
            "{key} is empty: list at least one of [\"{known}\"]"
        ));
    }
    for (at, source) in sources.iter().enumerate() {
        if platform.source(source).is_none() {
            return Err(format!(
                "{key}[{at}] {source:?} is not a source of {platform}: use [\"{known}\"]"
            ));
        }
        if sources[..at].contains(source) {
            return Err(format!("{key}[{at}] {source:?} is listed twice"));
        }
    }
    Ok(())
}

/// Creates `dir` if needed and checks that a file can be written in it.
fn writable_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let probe = dir.join(format!(".profile-lookup-probe-{}", std::process::id()));
    std::fs::write(&probe, b"")?;
    std::fs::remove_file(probe)
}

/// Milliseconds as a `Duration`: the config speaks in integers, the code in durations.
pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Decodes a 64-hex-digit SHA-256 digest (either case): the format of `auth.api_key_sha256`,
/// checked here when the settings are validated and decoded by [`crate::auth::Keys`].
pub fn parse_digest(hex: &str) -> Option<[u8; 32]> {
    let hex = hex.as_bytes();
    if hex.len() != 64 {
        return None;
    }
    let nibble = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
        *byte = nibble(pair[0])? << 4 | nibble(pair[1])?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_hex_digests_strictly() {
        assert!(parse_digest(&"0".repeat(64)).is_some());
        assert!(parse_digest(&"0".repeat(63)).is_none());
        assert!(parse_digest(&"g".repeat(64)).is_none());
    }
}
