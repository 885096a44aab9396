//! Configuration layering: defaults → TOML file → environment; validation.
//!
//! Environment variables are process-wide, so the environment layer is checked in a child
//! run of this test binary that is given them at spawn; nothing here calls `set_var`.

use std::io::Write;

use profile_lookup::config::Settings;
use profile_lookup::registry::Platform;

/// Set (to the file to load) only in the child process that checks the environment layer.
const CHILD: &str = "PROFILE_LOOKUP_TEST_ENV_CHILD";

#[test]
fn layering_and_validation() {
    // The built-in defaults are the shipped config/default.toml, embedded: loading the file
    // over them changes nothing.
    let shipped = concat!(env!("CARGO_MANIFEST_DIR"), "/config/default.toml");
    assert_eq!(
        profile_lookup::config::DEFAULTS_TOML,
        std::fs::read_to_string(shipped).unwrap()
    );
    let from_file = Settings::load(Some(shipped.as_ref())).expect("default.toml loads");
    let defaults = Settings::default();
    assert_eq!(
        serde_json::to_value(&from_file).unwrap(),
        serde_json::to_value(&defaults).unwrap(),
        "config/default.toml and Settings::default() disagree"
    );
    assert!(
        defaults.validate_for_serve().is_err(),
        "no key: serve refuses"
    );
    // `revalidate_seconds = "auto"` by default: the window is the TTL itself.
    assert_eq!(
        defaults.cache.revalidate_seconds,
        profile_lookup::config::Revalidate::Auto
    );
    assert_eq!(defaults.cache.revalidate_window(), 600);

    // A file overrides defaults.
    let mut file = tempfile();
    writeln!(
        file,
        "[auth]\napi_keys = [\"from-file\"]\n[cache]\nttl_seconds = 5\n[short_video]\nbase_url = \"http://127.0.0.1:9\"\n"
    )
    .unwrap();
    // The environment overrides the file. Environment variables are process-wide and the
    // other suites run in this process too, so the overriding happens in a child process.
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            &format!(
                "{}::environment_overrides_the_file",
                module_path!().trim_start_matches("it::")
            ),
            "--exact",
            "--quiet",
        ])
        .env(CHILD, file.path())
        .env("PROFILE_LOOKUP__CACHE__TTL_SECONDS", "7")
        .env(
            "PROFILE_LOOKUP__AUTH__API_KEYS",
            "key-one-0123456789,key-two-0123456789",
        )
        .env("PROFILE_LOOKUP__LOG__FORMAT", "json")
        .env(
            "PROFILE_LOOKUP__UPSTREAM__PROXIES",
            "http://u:8675309@proxy-a.invalid:3128, socks5h://proxy-b.invalid:1080",
        )
        .env(
            "PROFILE_LOOKUP__SHORT_VIDEO__PROXIES",
            "https://proxy-c.invalid:8443",
        )
        .env("PROFILE_LOOKUP__UPSTREAM__PROXY_COOLDOWN_SECONDS", "42")
        .env(
            "PROFILE_LOOKUP__UPSTREAM__BROWSER_PROFILES",
            "firefox, safari",
        )
        .env("PROFILE_LOOKUP__SHORT_VIDEO__JUNK_HEADERS", "false")
        .output()
        .expect("the test binary runs again");
    let report = String::from_utf8_lossy(&child.stdout);
    assert!(
        child.status.success() && report.contains(" 1 passed"),
        "the environment layer test failed or did not run in the child: {report}"
    );

    // Typos and nonsense are refused with a message naming the problem.
    for (toml, needle) in [
        ("[cache]\nttl_secnds = 5\n", "ttl_secnds"),
        ("[retry]\nmax_attempts = 0\n", "max_attempts"),
        ("[short_video]\nbase_url = \"ftp://x\"\n", "base_url"),
        ("[auth]\napi_key_sha256 = [\"abc\"]\n", "api_key_sha256"),
        ("[upstream]\nmax_body_bytes = 0\n", "max_body_bytes"),
        ("[server]\nlisten = \"nowhere\"\n", "listen"),
        (
            "[upstream]\nproxies = [\"http://h:1\", \"ftp://u:pw@h:21\"]\n",
            "upstream.proxies[1]",
        ),
        ("[photo_share]\nproxies = \"http://h:1\"\n", "proxies"),
        // An unknown section is named with the nearest known one; text where a number belongs
        // is refused.
        (
            "[sever]\nlisten = \"x\"\n",
            "unknown section `sever`; did you mean `server`?",
        ),
        ("[photo_share]\nburst = \"many\"\n", "photo_share.burst"),
        (
            "[upstream]\nproxy_cooldown_seconds = 0\n",
            "proxy_cooldown_seconds",
        ),
        (
            "[upstream]\nbrowser_profiles = [\"safari\", \"safari\"]\n",
            "upstream.browser_profiles[1]",
        ),
    ] {
        let mut file = tempfile();
        file.write_all(toml.as_bytes()).unwrap();
        let err = Settings::load(Some(file.path()))
            .expect_err(toml)
            .to_string();
        assert!(err.contains(needle), "{toml}: {err}");
    }
}

fn tempfile() -> tempfile::NamedTempFile {
    crate::support::temp_file("profile-lookup-test-", ".toml", b"")
}

/// Run by [`layering_and_validation`] in a child process with the environment set; on its own
/// (no child marker) there is nothing to check.
#[test]
fn environment_overrides_the_file() {
    let Some(file) = std::env::var_os(CHILD) else {
        return;
    };
    let s = Settings::load(Some(file.as_ref())).expect("layers load");
    assert_eq!(s.cache.ttl_seconds, 7);
    // "auto" follows the TTL wherever it was set.
    assert_eq!(s.cache.revalidate_window(), 7);
    assert_eq!(
        s.auth.api_keys,
        ["key-one-0123456789", "key-two-0123456789"]
    );
    assert_eq!(
        s.platform(Platform::ShortVideo).base_url.as_str(),
        "http://127.0.0.1:9/"
    );
    assert_eq!(
        s.platform(Platform::PhotoShare).base_url.as_str(),
        "https://www.instagram.com/"
    );
    assert_eq!(s.log.format, profile_lookup::config::LogFormat::Json);
    // Proxy lists are comma-separated and trimmed; a number-like password stays a string.
    assert_eq!(
        s.upstream.proxies,
        [
            "http://u:8675309@proxy-a.invalid:3128",
            "socks5h://proxy-b.invalid:1080"
        ]
    );
    assert_eq!(
        s.platform(Platform::ShortVideo).proxies,
        ["https://proxy-c.invalid:8443"]
    );
    assert!(s.platform(Platform::PhotoShare).proxies.is_empty());
    assert_eq!(s.upstream.proxy_cooldown_seconds, 42);
    use profile_lookup::config::BrowserProfile;
    assert_eq!(
        s.upstream.browser_profiles,
        [BrowserProfile::Firefox, BrowserProfile::Safari]
    );
    assert!(!s.platform(Platform::ShortVideo).junk_headers);
    assert!(s.validate_for_serve().is_ok());
}
