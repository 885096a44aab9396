//! The typed configuration: its sections, their layering and their validation.
//!
//! Layers, later ones winning: the built-in defaults (`config/default.toml`, embedded in the
//! binary: [`Settings::default`]), then a TOML file (`--config FILE` or
//! `PROFILE_LOOKUP_CONFIG`), then environment variables `PROFILE_LOOKUP__SECTION__KEY` (lists
//! comma-separated). Unknown keys are errors, so a typo in a key name stops the service
//! instead of being silently ignored; every error names where the value was set (the file and
//! line, or the variable: [`Sources`]) and is worded for an operator (`mistakes`).
//!
//! Each section is a file holding its struct and its checks ([`Section`]); a platform's
//! section ([`PlatformConfig`]) is one type for every registered platform, found by its
//! [`Platform::section`] (`sections` puts them together). The helpers beside them read what
//! several sections share: proxy URLs, browser profiles, the CA file, the secret lists and the
//! value ranges.

use std::path::Path;
use std::sync::LazyLock;
use std::time::Duration;

use config::{Config, Environment, File, FileFormat};

use crate::registry::Platform;

pub mod auth;
pub mod blame;
pub mod breaker;
pub mod browser_profiles;
pub mod ca_file;
pub mod cache;
pub mod canary;
pub mod effective;
mod limits;
pub mod log;
mod mistakes;
pub mod origins;
pub mod platforms;
pub mod proxies;
pub mod rate_limit;
pub mod redis;
pub mod retry;
mod secret_list;
mod sections;
pub mod server;
pub mod telemetry;
pub mod upstream;
pub mod words;

pub use auth::{AuthConfig, parse_digest};
pub use blame::BlameConfig;
pub use breaker::BreakerConfig;
pub use browser_profiles::BrowserProfile;
pub use cache::{CacheConfig, Revalidate};
pub use canary::CanaryConfig;
pub use log::{LogConfig, LogFormat};
pub use origins::{Origin, Sources};
pub use platforms::{PlatformConfig, PostCount};
pub use rate_limit::RateLimitConfig;
pub use redis::{RedisConfig, RedisTarget};
pub use retry::RetryConfig;
pub use server::ServerConfig;
pub use telemetry::TelemetryConfig;
pub use upstream::{UpstreamClient, UpstreamConfig};

/// Environment variable naming the config file when `--config` is not given.
pub const CONFIG_ENV: &str = "PROFILE_LOOKUP_CONFIG";
/// Prefix of the per-key environment overrides.
pub const ENV_PREFIX: &str = "PROFILE_LOOKUP";
/// The built-in defaults: `config/default.toml`, every key with its default and its meaning.
pub const DEFAULTS_TOML: &str = include_str!("../../config/default.toml");

/// One section of the settings (`[server]`, `[cache]`, …), which checks its own values.
pub trait Section {
    /// Why values that parse cannot work, naming the key (and never a secret's value).
    fn check(&self) -> Result<(), String>;
}

sections::settings! {
    /// Listening socket and server limits.
    server: ServerConfig,
    /// API keys.
    auth: AuthConfig,
    /// The per-key quota.
    rate_limit: RateLimitConfig,
    @platforms
    /// Timeouts and size limits of every upstream request.
    upstream: UpstreamConfig,
    /// Retries of throttled photo-share requests.
    retry: RetryConfig,
    /// The profile cache.
    cache: CacheConfig,
    /// The per-platform circuit breaker.
    breaker: BreakerConfig,
    /// How much comparison blames a name, a route or a source.
    blame: BlameConfig,
    /// Log output.
    log: LogConfig,
    /// Where a fleet of replicas keeps its shared state (empty `url`: each keeps its own).
    redis: RedisConfig,
    /// The canary: accounts looked up through each source every interval.
    canary: CanaryConfig,
    /// Where traces go (empty endpoint: nowhere).
    telemetry: TelemetryConfig,
}

/// Why the configuration could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A layer could not be read or did not fit the schema (the message names the key and
    /// where it was set).
    #[error("configuration could not be read: {0}")]
    Load(String),
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
        Self::load_traced(file).map(|(settings, _)| settings)
    }

    /// [`Settings::load`], with where each value came from (for `check`, the start-up
    /// summary, and [`Sources::locate`] on later checks' messages).
    pub fn load_traced(file: Option<&Path>) -> Result<(Self, Sources), ConfigError> {
        let env_file = std::env::var_os(CONFIG_ENV);
        let file = file.or(env_file.as_deref().map(Path::new));
        // Read once here so a missing or unreadable file is named, with what to do.
        let text = file
            .map(|path| {
                std::fs::read_to_string(path).map_err(|source| ConfigError::File {
                    path: path.to_owned(),
                    source,
                })
            })
            .transpose()?;
        let env = secret_list::Env::read()?;
        let sources = Sources::new(file.zip(text.as_deref()), env.names)?;
        mistakes::check(&sources).map_err(ConfigError::Invalid)?;
        let mut builder = Config::builder().add_source(defaults());
        if let Some(text) = &text {
            builder = builder.add_source(File::from_str(text, FileFormat::Toml));
        }
        // Scalars are try-parsed (so `…__CACHE__ENABLED=false` is a bool); the key lists are
        // not: the env source would turn `8675309` into a number and `k1, k2` into " k2".
        let scalars = Environment::with_prefix(ENV_PREFIX)
            .prefix_separator("__")
            .separator("__")
            .try_parsing(true)
            .source(Some(env.scalars));
        builder = builder.add_source(scalars);
        for (key, items) in env.lists {
            builder = builder
                .set_override(key, items)
                .map_err(|e| ConfigError::Load(mistakes::explain(e)))?;
        }
        let settings: Settings = builder
            .build()
            .and_then(Config::try_deserialize)
            .map_err(|e| ConfigError::Load(sources.locate(&mistakes::explain(e))))?;
        settings.validate().map_err(|e| sources.locate_error(e))?;
        Ok((settings, sources))
    }

    /// Checks values that parse but cannot work: each section checks itself. `serve` also
    /// requires at least one key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.check_sections().map_err(ConfigError::Invalid)
    }

    /// `validate`, plus what only a served API needs: a build with the configured client, a
    /// writable capture folder, at least one key, and a Redis URL when `redis.required`.
    pub fn validate_for_serve(&self) -> Result<(), ConfigError> {
        self.validate()?;
        self.upstream
            .check_for_serve()
            .and_then(|()| self.auth.check_for_serve())
            .and_then(|()| self.redis.check_for_serve())
            .map_err(ConfigError::Invalid)
    }

    /// The settings section of `platform` (`[<section>]`, named by its registry line).
    pub fn platform(&self, platform: Platform) -> &PlatformConfig {
        self.platforms.get(platform)
    }

    /// The settings section of `platform`, to change (the demo and the tests point every
    /// platform at their own loopback upstream).
    pub fn platform_mut(&mut self, platform: Platform) -> &mut PlatformConfig {
        self.platforms.get_mut(platform)
    }
}

impl Default for Settings {
    /// The built-in defaults: [`DEFAULTS_TOML`], read once (a unit test holds that it loads
    /// and validates).
    fn default() -> Self {
        static DEFAULTS: LazyLock<Settings> = LazyLock::new(|| {
            Config::builder()
                .add_source(defaults())
                .build()
                .and_then(Config::try_deserialize)
                .unwrap_or_else(|e| panic!("the embedded config/default.toml does not load: {e}"))
        });
        DEFAULTS.clone()
    }
}

/// The first layer: the built-in defaults.
fn defaults() -> File<config::FileSourceString, FileFormat> {
    File::from_str(DEFAULTS_TOML, FileFormat::Toml)
}

/// Milliseconds as a `Duration`: the config speaks in integers, the code in durations.
pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_defaults_load_and_validate() {
        let defaults = Settings::default();
        assert!(defaults.validate().is_ok());
        // The defaults ask the registry's sources in its order; a source that needs a setting
        // of its own (photo-share's `graphql`) is last in the registry and left out.
        for &p in Platform::ALL {
            let sources = &defaults.platform(p).sources;
            assert!(
                p.sources()
                    .starts_with(&sources.iter().map(String::as_str).collect::<Vec<_>>()),
                "[{}]",
                p.section()
            );
        }
    }

    #[test]
    fn unknown_and_missing_sections_are_named_as_serde_names_them() {
        let read = |edit: fn(&mut serde_json::Map<String, serde_json::Value>)| {
            let mut table = serde_json::to_value(Settings::default()).unwrap();
            edit(table.as_object_mut().unwrap());
            serde_json::from_value::<Settings>(table)
                .unwrap_err()
                .to_string()
        };
        let unknown = read(|t| drop(t.insert("sever".into(), serde_json::json!({}))));
        let sections = Platform::ALL.iter().map(|p| p.section());
        let names: Vec<String> = ["server", "auth", "rate_limit"]
            .into_iter()
            .chain(sections)
            .chain([
                "upstream",
                "retry",
                "cache",
                "breaker",
                "blame",
                "log",
                "redis",
                "canary",
                "telemetry",
            ])
            .map(|name| format!("`{name}`"))
            .collect();
        let expected = format!(
            "unknown field `sever`, expected one of {}",
            names.join(", ")
        );
        assert!(unknown.starts_with(&expected), "{unknown}");
        let missing = |t: &mut serde_json::Map<_, _>| drop(t.remove(Platform::ALL[0].section()));
        let expected = format!("missing field `{}`", Platform::ALL[0].section());
        assert!(read(missing).contains(&expected));
        assert!(read(|t| drop(t.remove("cache"))).contains("missing field `cache`"));
    }
}
