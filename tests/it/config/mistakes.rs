//! Configuration mistakes as an operator makes them, through the real binary (`check
//! --offline`): each is refused with a message naming the key and where it was set (the
//! file and line, or the environment variable), what a valid value looks like (the allowed
//! values of an enum-like setting), the nearest known key for an unknown one, and no Rust
//! type name.

use crate::support::binary::Binary;

/// A key long enough for `serve`'s rule, so that only the mistake under test is refused.
const KEY: &str = "mistakes-key-0123456789";

/// Words of Rust's and serde's own that no message may carry.
const INTERNALS: [&str; 6] = [
    "enum ",
    "variant",
    "<unparsable>",
    "struct ",
    "relative URL without a base",
    "64-bit",
];

/// `check --offline` with `toml` as the config file (when given) and `env` set: the exit code
/// and stderr, and the file's path as messages name it.
fn check(toml: Option<&str>, env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let file = crate::support::temp_file(
        "profile-lookup-mistake-",
        ".toml",
        toml.unwrap_or("").as_bytes(),
    );
    let mut command = Binary::new(&["check", "--offline"]).env_remove("PROFILE_LOOKUP_CONFIG");
    for (key, _) in std::env::vars() {
        if key.starts_with("PROFILE_LOOKUP__") || key == "RUST_LOG" {
            command = command.env_remove(&key);
        }
    }
    if toml.is_some() {
        command = command.arg("--config").arg(file.path());
    }
    if !toml.is_some_and(|t| t.contains("api_keys")) {
        command = command.env("PROFILE_LOOKUP__AUTH__API_KEYS", KEY);
    }
    for (key, value) in env {
        command = command.env(key, value);
    }
    let out = command.output();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), stderr, file.path().display().to_string())
}

#[test]
fn file_mistakes_name_the_key_the_file_and_line_and_what_is_valid() {
    // `@` stands for the file's path: `@:2` is its second line.
    let cases: &[(&str, &[&str])] = &[
        (
            "[log]\nformat = \"jsonl\"\n",
            &["log.format", "@:2", "\"pretty\"", "\"json\""],
        ),
        (
            "[log]\nlevel = \"warning\"\n",
            &["log.level", "@:2", "\"warn\"", "\"info\"", "\"debug\""],
        ),
        (
            "\n[log]\nlevel = \"verbose\"\n",
            &["log.level", "@:3", "\"trace\""],
        ),
        (
            "[rate_limit]\nburst = 5\nper_key_per_minte = 60\n",
            &[
                "rate_limit.per_key_per_minte",
                "@:3",
                "did you mean `per_key_per_minute`?",
            ],
        ),
        (
            "[sever]\nlisten = \"127.0.0.1:1\"\n",
            &["`sever`", "@:1", "did you mean `server`?"],
        ),
        (
            "[rate_limit]\nper_key_per_minute = \"60\"\n",
            &["rate_limit.per_key_per_minute", "@:2", "a number", "= 60"],
        ),
        (
            "[server]\nlisten = \"localhost:8080\"\n",
            &[
                "server.listen",
                "@:2",
                "host names are not accepted",
                "\"127.0.0.1:8080\"",
            ],
        ),
        (
            "[short_video]\nbase_url = \"nowhere\"\n",
            &["short_video.base_url", "@:2", "\"https://"],
        ),
        (
            "[upstream]\nproxies = [\"nope\"]\n",
            &["upstream.proxies[0]", "@:2", "http://host:port"],
        ),
        (
            "[upstream]\nproxies = [\"http://u:pw@proxy.invalid\"]\n",
            &["upstream.proxies[0]", "@:2", "no port"],
        ),
        (
            "[upstream]\nclient = \"chrome\"\n",
            &["upstream.client", "@:2", "\"plain\"", "\"browser\""],
        ),
        (
            "[upstream]\nbrowser_profiles = [\"opera\"]\n",
            &["upstream.browser_profiles[0]", "@:2", "\"chrome_previous\""],
        ),
        (
            "[short_video]\nsources = [\"x\"]\n",
            &["short_video.sources[0]", "@:2", "\"page\"", "\"embed\""],
        ),
        (
            "[photo_share]\npost_count = \"many\"\n",
            &["photo_share.post_count", "@:2", "\"embed\"", "\"skip\""],
        ),
        (
            "[auth]\napi_keys = [\"short-key\"]\n",
            &["auth.api_keys[0]", "@:2", "16 characters"],
        ),
        (
            "[cache]\nttl_seconds = -1\n",
            &["cache.ttl_seconds", "@:2", "0"],
        ),
        (
            "[retry]\nmax_attempts = 0\n",
            &["retry.max_attempts", "@:2"],
        ),
        (
            "[cache]\nttl_seconds = 1.5\n",
            &["cache.ttl_seconds", "@:2", "a whole number"],
        ),
        (
            "[cache]\nenabled = 1\n",
            &["cache.enabled", "@:2", "true or false"],
        ),
        (
            "[server]\nmax_headers = true\n",
            &["server.max_headers", "@:2", "a number"],
        ),
        (
            "[upstream]\nbrowser_profiles = \"chrome\"\n",
            &["upstream.browser_profiles", "@:2", "not a list"],
        ),
        (
            "[redis]\nurl = 5\n",
            &["redis.url", "@:2", "config/default.toml"],
        ),
        // Neither the text (a password may be in it) nor the URL parser's own words.
        (
            "[redis]\nurl = \"redis//:hunter2@cache\"\n",
            &["@:2: redis.url is not a URL", "host:port[/db]"],
        ),
        (
            "[redis]\nurl = \"redis://[bad\"\n",
            &["redis.url is not a URL", "rediss://"],
        ),
    ];
    for (toml, needles) in cases {
        let (code, stderr, path) = check(Some(toml), &[]);
        assert_eq!(code, Some(2), "{toml}: {stderr}");
        for needle in *needles {
            let needle = needle.replace('@', &path);
            assert!(
                stderr.contains(&needle),
                "{toml}: {needle:?} missing from {stderr}"
            );
        }
        for word in INTERNALS {
            assert!(!stderr.contains(word), "{toml}: {word:?} in {stderr}");
        }
        assert!(!stderr.contains("hunter2"), "a password shown: {stderr}");
    }
}

#[test]
fn environment_mistakes_name_the_variable() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "PROFILE_LOOKUP__LOG__FORMAT",
            "jsonl",
            &["PROFILE_LOOKUP__LOG__FORMAT", "\"pretty\"", "\"json\""],
        ),
        (
            "PROFILE_LOOKUP__LOG__LEVEL",
            "warning",
            &["PROFILE_LOOKUP__LOG__LEVEL", "\"warn\""],
        ),
        (
            "PROFILE_LOOKUP__RATE_LIMIT__PER_KEY_PER_MINTE",
            "60",
            &[
                "PROFILE_LOOKUP__RATE_LIMIT__PER_KEY_PER_MINTE",
                "did you mean PROFILE_LOOKUP__RATE_LIMIT__PER_KEY_PER_MINUTE?",
            ],
        ),
        (
            "PROFILE_LOOKUP__SERVER__LISTEN",
            "localhost:8080",
            &[
                "PROFILE_LOOKUP__SERVER__LISTEN",
                "host names are not accepted",
            ],
        ),
        (
            "PROFILE_LOOKUP__CACHE__TTL_SECONDS",
            "ten",
            &["PROFILE_LOOKUP__CACHE__TTL_SECONDS", "a number"],
        ),
        (
            "PROFILE_LOOKUP__UPSTREAM__PROXIES",
            "http://proxy.invalid:3128,socks5h://proxy.invalid",
            &[
                "PROFILE_LOOKUP__UPSTREAM__PROXIES",
                "upstream.proxies[1]",
                "no port",
            ],
        ),
        (
            "PROFILE_LOOKUP__AUTH__API_KEYS",
            "abc",
            &[
                "PROFILE_LOOKUP__AUTH__API_KEYS",
                "auth.api_keys[0]",
                "16 characters",
            ],
        ),
    ];
    for (var, value, needles) in cases {
        let (code, stderr, _) = check(None, &[(var, value)]);
        assert_eq!(code, Some(2), "{var}={value}: {stderr}");
        for needle in *needles {
            assert!(
                stderr.contains(needle),
                "{var}={value}: {needle:?} missing from {stderr}"
            );
        }
        for word in INTERNALS {
            assert!(
                !stderr.contains(word),
                "{var}={value}: {word:?} in {stderr}"
            );
        }
    }
    // Environment variables are strings by nature: a number in one is read as a number.
    let (code, stderr, _) = check(
        None,
        &[("PROFILE_LOOKUP__RATE_LIMIT__PER_KEY_PER_MINUTE", "60")],
    );
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn a_fatal_start_up_error_is_a_json_line_under_the_json_format() {
    let file = crate::support::temp_file(
        "profile-lookup-mistake-",
        ".toml",
        b"[log]\nformat = \"json\"\n[cache]\nttl_secnds = 5\n",
    );
    let out = Binary::new(&["serve", "--config"])
        .arg(file.path())
        .env_remove("PROFILE_LOOKUP_CONFIG")
        .env_remove("PROFILE_LOOKUP__LOG__FORMAT")
        .env("PROFILE_LOOKUP__AUTH__API_KEYS", KEY)
        .output();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line: serde_json::Value = serde_json::from_str(stderr.trim())
        .unwrap_or_else(|e| panic!("not one JSON line ({e}): {stderr}"));
    assert_eq!(line["level"], "ERROR", "{stderr}");
    let message = line["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("cache.ttl_secnds") && message.contains("did you mean `ttl_seconds`?"),
        "{stderr}"
    );
}
