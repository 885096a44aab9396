//! `[upstream]`: how every request to a platform is sent: its deadline and size cap, the
//! client, the roots it trusts, the proxies it goes through and where unreadable pages are kept.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::Section;
use super::browser_profiles::{self, BrowserProfile};
use super::limits::{self, DAY_S, GIB, HOUR_MS, n, range};
use super::words::{Words, deserialize_words};
use super::{ca_file, proxies, secret_list};

/// `[upstream]`
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpstreamConfig {
    /// Total time for one upstream request: connect, headers and the whole body.
    pub timeout_ms: u64,
    /// How long one upstream request waits for its response head (connect included), at most
    /// `timeout_ms`; the body has what is left of `timeout_ms`. A route that misses it is
    /// silent.
    pub head_timeout_ms: u64,
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
    /// How many fresh sessions of one gateway may be refused in a row (each blocked before
    /// it answered anything) before the gateway itself rests: the platform then refuses the
    /// provider's whole pool, and a new session would only be refused again.
    pub gateway_block_threshold: u32,
    /// How many lookups one gateway session serves before the next lookup gets a new one.
    pub session_max_lookups: u32,
    /// How old a gateway session may grow before the next lookup gets a new one (kept below
    /// the providers' sticky lifetimes, so the exit does not change under a session).
    pub session_max_age_seconds: u64,
    /// The browsers the browser client presents, one per lookup in turn, the next after a
    /// block (ignored by the plain client).
    pub browser_profiles: Vec<BrowserProfile>,
    /// Where pages that could not be read are kept for `extract`; empty: nowhere.
    pub capture_dir: PathBuf,
    /// The most pages kept in `capture_dir` (the oldest go first).
    pub capture_max_files: usize,
}

/// `upstream.client`: the platforms refuse clients whose handshakes are not a browser's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum UpstreamClient {
    /// rustls over HTTP/1.1; needs nothing but a Rust toolchain to build.
    Plain,
    /// A current desktop browser's TLS and HTTP/2 fingerprint, one of
    /// `upstream.browser_profiles` per lookup (cargo feature `browser`).
    Browser,
}

impl Words for UpstreamClient {
    const WHAT: &'static str = "an upstream client";
    const ALL: &'static [(&'static str, Self)] = &[
        ("plain", UpstreamClient::Plain),
        ("browser", UpstreamClient::Browser),
    ];
}

deserialize_words!(UpstreamClient);

impl UpstreamConfig {
    /// The configured `ca_file`, if any.
    pub fn ca_file(&self) -> Option<&Path> {
        (!self.ca_file.as_os_str().is_empty()).then_some(self.ca_file.as_path())
    }

    /// How long a proxy rests after a block or a connection failure through it.
    pub fn proxy_cooldown(&self) -> Duration {
        Duration::from_secs(self.proxy_cooldown_seconds)
    }

    /// How old a gateway session may grow (`session_max_age_seconds`).
    pub fn session_max_age(&self) -> Duration {
        Duration::from_secs(self.session_max_age_seconds)
    }

    /// The configured `capture_dir`, if drift capture is on.
    pub fn capture_dir(&self) -> Option<&Path> {
        (!self.capture_dir.as_os_str().is_empty()).then_some(self.capture_dir.as_path())
    }

    /// What only `profile-lookup serve` needs: a build with the client asked for, and a
    /// capture folder it can write in.
    pub fn check_for_serve(&self) -> Result<(), String> {
        if self.client == UpstreamClient::Browser && !cfg!(feature = "browser") {
            return Err(
                "upstream.client = \"browser\" needs a build with the browser-grade client: \
                 cargo build --release --features browser (it needs cmake and libclang)"
                    .into(),
            );
        }
        if let Some(dir) = self.capture_dir() {
            writable_dir(dir).map_err(|e| {
                format!("upstream.capture_dir {} cannot be used: {e}", dir.display())
            })?;
        }
        Ok(())
    }
}

impl Section for UpstreamConfig {
    fn check(&self) -> Result<(), String> {
        limits::check(&[
            range("upstream.timeout_ms", self.timeout_ms, 1, HOUR_MS, "1 hour"),
            range(
                "upstream.head_timeout_ms",
                self.head_timeout_ms,
                1,
                HOUR_MS,
                "1 hour",
            ),
            range(
                "upstream.max_body_bytes",
                n(self.max_body_bytes),
                1,
                GIB,
                "1 GiB",
            ),
            range(
                "upstream.capture_max_files",
                n(self.capture_max_files),
                1,
                100_000,
                "100000",
            ),
            range(
                "upstream.proxy_cooldown_seconds",
                self.proxy_cooldown_seconds,
                1,
                DAY_S,
                "1 day",
            ),
            range(
                "upstream.gateway_block_threshold",
                u64::from(self.gateway_block_threshold),
                1,
                100,
                "100",
            ),
            range(
                "upstream.session_max_lookups",
                u64::from(self.session_max_lookups),
                1,
                1_000_000,
                "1000000",
            ),
            range(
                "upstream.session_max_age_seconds",
                self.session_max_age_seconds,
                1,
                DAY_S,
                "1 day",
            ),
        ])?;
        proxies::check_proxies("upstream.proxies", &self.proxies)?;
        browser_profiles::check(
            &self.browser_profiles,
            self.client == UpstreamClient::Browser,
        )?;
        if let Some(path) = self.ca_file() {
            ca_file::read_pem_roots(path)
                .map_err(|reason| format!("upstream.ca_file {}: {reason}", path.display()))?;
        }
        Ok(())
    }
}

/// Creates `dir` if needed and checks that a file can be written in it.
fn writable_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let probe = dir.join(format!(".profile-lookup-probe-{}", std::process::id()));
    std::fs::write(&probe, b"")?;
    std::fs::remove_file(probe)
}
