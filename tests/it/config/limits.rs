//! Every duration, size and count in the config has a range checked at load time: a huge value
//! is a clear error naming the key and its range, never a panic at start or later (an
//! `Instant + Duration` overflow when the breaker opens, a semaphore over its maximum, …).
//!
//! Environment variables are process-wide, so every test here sets them
//! through [`with_env`] (or holds [`ENV`] while a child inherits them).
//!
//! They run in a child process of their own: see [`crate::support::own_process`].

use profile_lookup::config::Settings;

use crate::support::binary::Binary;
use crate::support::{ENV, with_env};

/// Every range-checked key, as `section.key`.
const KEYS: [&str; 23] = [
    "server.header_read_timeout_ms",
    "server.request_timeout_ms",
    "server.max_header_bytes",
    "server.max_headers",
    "server.max_in_flight",
    "server.shutdown_grace_ms",
    "short_video.max_queue_ms",
    "short_video.max_concurrency",
    "photo_share.max_queue_ms",
    "photo_share.max_concurrency",
    "upstream.timeout_ms",
    "upstream.max_body_bytes",
    "upstream.capture_max_files",
    "retry.base_delay_ms",
    "retry.max_delay_ms",
    "retry.max_total_ms",
    "cache.ttl_seconds",
    "cache.negative_ttl_seconds",
    "cache.max_stale_seconds",
    "cache.max_bytes",
    "cache.revalidate_seconds",
    "cache.hot_hits",
    "breaker.cooldown_seconds",
];

const U64_MAX: &str = "18446744073709551615";
const I64_MAX: &str = "9223372036854775807";

/// Loads with `env` set and, when given, `toml` as the config file; catches any panic.
fn load(env: &[(String, String)], toml: Option<&str>) -> Result<Settings, String> {
    with_env(env, ("profile-lookup-limits-", toml), |path| {
        std::panic::catch_unwind(|| {
            // Building the state is where the huge values used to panic.
            let settings = Settings::load(path).map_err(|e| e.to_string())?;
            let runtime = tokio::runtime::Runtime::new().unwrap();
            runtime.block_on(async {
                profile_lookup::AppState::new(settings.clone()).map_err(|e| e.to_string())
            })?;
            Ok(settings)
        })
        .unwrap_or_else(|_| Err("PANICKED".into()))
    })
}

fn env_name(key: &str) -> String {
    format!("PROFILE_LOOKUP__{}", key.replace('.', "__").to_uppercase())
}

fn toml_for(key: &str, value: &str) -> String {
    let (section, name) = key.split_once('.').unwrap();
    format!("[{section}]\n{name} = {value}\n")
}

/// The error names the key and an allowed range (`… to …`).
fn assert_clear(err: &str, key: &str, how: &str) {
    assert_ne!(err, "PANICKED", "{key} via {how} panicked");
    assert!(err.contains(key), "{key} via {how}: {err}");
    assert!(
        err.contains("allowed"),
        "{key} via {how}: no range in {err}"
    );
}

#[test]
fn huge_values_from_the_environment_are_clear_errors() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::huge_values_from_the_environment_are_clear_errors"
    )) {
        return;
    }
    for key in KEYS {
        for value in [U64_MAX, I64_MAX] {
            let err = load(&[(env_name(key), value.into())], None).expect_err(key);
            assert_clear(&err, key, &format!("env {value}"));
        }
    }
}

#[test]
fn huge_values_from_the_file_are_clear_errors() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::huge_values_from_the_file_are_clear_errors"
    )) {
        return;
    }
    for key in KEYS {
        // The largest integer TOML can hold.
        let err = load(&[], Some(&toml_for(key, I64_MAX))).expect_err(key);
        assert_clear(&err, key, &format!("file {I64_MAX}"));
        // 2^64-1 written as a string: text where a number belongs, refused as such (a key
        // that also takes a word, `revalidate_seconds = "auto"`, reads the digits and refuses
        // the range).
        let err = load(&[], Some(&toml_for(key, &format!("\"{U64_MAX}\"")))).expect_err(key);
        assert!(
            err.contains(key)
                && (err.contains("where a number belongs") || err.contains("allowed")),
            "{key}: {err}"
        );
        // 2^64-1 as a bare integer is beyond TOML's integers: a parse error naming the file.
        let err = load(&[], Some(&toml_for(key, U64_MAX))).expect_err(key);
        assert_ne!(err, "PANICKED");
        assert!(err.contains("profile-lookup-limits-"), "{key}: {err}");
    }
}

#[test]
fn the_largest_allowed_values_load_and_start() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::the_largest_allowed_values_load_and_start"
    )) {
        return;
    }
    let s = load(
        &[
            (env_name("cache.ttl_seconds"), "31536000".into()),
            (env_name("cache.max_stale_seconds"), "31536000".into()),
            (env_name("breaker.cooldown_seconds"), "86400".into()),
            (env_name("upstream.timeout_ms"), "3600000".into()),
        ],
        None,
    )
    .expect("the maxima are allowed");
    assert_eq!(s.cache.ttl_seconds, 31_536_000);
    let err = load(&[(env_name("cache.ttl_seconds"), "31536001".into())], None).unwrap_err();
    assert_clear(&err, "cache.ttl_seconds", "one past the maximum");
}

#[test]
fn serve_with_a_huge_value_exits_non_zero_naming_the_key() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::serve_with_a_huge_value_exits_non_zero_naming_the_key"
    )) {
        return;
    }
    // The child inherits this process's environment: hold the lock the in-process cases take
    // while they set variables, or a child may start with another case's huge value.
    let _guard = ENV.lock().unwrap_or_else(|p| p.into_inner());
    for key in [
        "cache.ttl_seconds",
        "cache.max_stale_seconds",
        "breaker.cooldown_seconds",
    ] {
        let out = Binary::new(&["serve"])
            .env_remove("PROFILE_LOOKUP_CONFIG")
            .env("PROFILE_LOOKUP__AUTH__API_KEYS", "limits-key")
            .env("PROFILE_LOOKUP__SERVER__LISTEN", "127.0.0.1:0")
            .env(&env_name(key), U64_MAX)
            .output();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{key}: {stderr}");
        assert_clear(&stderr, key, "serve");
    }
}
