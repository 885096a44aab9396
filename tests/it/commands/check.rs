//! `profile-lookup check`: what `serve` would refuse, refused with `serve`'s exit code; the
//! effective configuration printed with its secrets masked and, for each value that is not a
//! default, where it came from; Redis asked unless `--offline`.

use std::process::Output;

use crate::support::binary::Binary;
use crate::support::test_redis;

const KEY: &str = "check-key-0123456789abcdef";
const PROXY_SECRET: &str = "hunter2-proxy-secret";
const REDIS_SECRET: &str = "redis-pass-0123456789";

/// `check ARGS` with `toml` as its config file and `env` set, nothing else of the service's
/// environment inherited; what it wrote, and the file's path.
fn check(args: &[&str], toml: &str, env: &[(&str, &str)]) -> (Output, String) {
    let file = crate::support::temp_file("profile-lookup-check-", ".toml", toml.as_bytes());
    let mut command = Binary::new(&["check"]).env_remove("PROFILE_LOOKUP_CONFIG");
    for (key, _) in std::env::vars() {
        if key.starts_with("PROFILE_LOOKUP__") || key == "RUST_LOG" {
            command = command.env_remove(&key);
        }
    }
    for arg in args {
        command = command.arg(arg);
    }
    command = command.arg("--config").arg(file.path());
    for (key, value) in env {
        command = command.env(key, value);
    }
    (command.output(), file.path().display().to_string())
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn check_prints_the_effective_configuration_with_secrets_masked_and_origins() {
    let toml = format!(
        "[cache]\nttl_seconds = 5\n[upstream]\nproxies = [\"http://agent:{PROXY_SECRET}@proxy.invalid:3128\"]\n"
    );
    let (out, path) = check(
        &["--offline"],
        &toml,
        &[
            ("PROFILE_LOOKUP__AUTH__API_KEYS", KEY),
            ("PROFILE_LOOKUP__LOG__LEVEL", "warn"),
        ],
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    let line = |start: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no line {start:?} in {stdout}"))
            .to_owned()
    };
    assert_eq!(
        line("cache.ttl_seconds ="),
        format!("cache.ttl_seconds = 5  # {path}:2")
    );
    assert_eq!(
        line("log.level ="),
        "log.level = \"warn\"  # PROFILE_LOOKUP__LOG__LEVEL"
    );
    assert_eq!(
        line("auth.api_keys ="),
        "auth.api_keys = [\"***\"]  # PROFILE_LOOKUP__AUTH__API_KEYS"
    );
    assert_eq!(
        line("upstream.proxies ="),
        format!("upstream.proxies = [\"http://***:***@proxy.invalid:3128\"]  # {path}:4")
    );
    // A default says nothing of where it came from.
    assert_eq!(line("server.max_headers ="), "server.max_headers = 64");
    for secret in [KEY, PROXY_SECRET, "agent"] {
        assert!(!stdout.contains(secret), "{secret:?} printed: {stdout}");
    }
    assert!(stdout.contains("redis: not asked (--offline)"), "{stdout}");
}

#[test]
fn check_exits_as_serve_would_for_what_serve_refuses() {
    // No key: serve refuses with 2, and so does check.
    let (out, _) = check(&["--offline"], "", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no API key"),
        "{}",
        text(&out.stderr)
    );
    // A value out of range.
    let (out, _) = check(
        &["--offline"],
        "[retry]\nmax_attempts = 0\n",
        &[("PROFILE_LOOKUP__AUTH__API_KEYS", KEY)],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("retry.max_attempts"));
    // A usage mistake is 3, as for every subcommand.
    let (out, _) = check(&["--ofline"], "", &[]);
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn check_asks_redis_unless_offline() {
    // Nobody listens on this port: serve would start alone; check says so and exits 1.
    let url = format!("redis://127.0.0.1:{}/0", test_redis::free_port());
    let env = [
        ("PROFILE_LOOKUP__AUTH__API_KEYS", KEY),
        ("PROFILE_LOOKUP__REDIS__URL", url.as_str()),
    ];
    let (out, _) = check(&[], "", &env);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("could not be reached"), "{stdout}");
    let (out, _) = check(&["--offline"], "", &env);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    // A Redis that refuses the credentials: serve's 2, and the password never printed.
    let Some(redis) = test_redis::start_with(&["--requirepass", REDIS_SECRET]) else {
        return;
    };
    let wrong = format!("redis://:wrong-{REDIS_SECRET}@127.0.0.1:{}/0", redis.port());
    let (out, _) = check(
        &[],
        "",
        &[
            ("PROFILE_LOOKUP__AUTH__API_KEYS", KEY),
            ("PROFILE_LOOKUP__REDIS__URL", wrong.as_str()),
        ],
    );
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(all.contains("refused"), "{all}");
    assert!(!all.contains(REDIS_SECRET), "{all}");
    let right = format!("redis://:{REDIS_SECRET}@127.0.0.1:{}/0", redis.port());
    let (out, _) = check(
        &[],
        "",
        &[
            ("PROFILE_LOOKUP__AUTH__API_KEYS", KEY),
            ("PROFILE_LOOKUP__REDIS__URL", right.as_str()),
        ],
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("redis: answered"), "{stdout}");
    assert!(!stdout.contains(REDIS_SECRET), "{stdout}");
    assert!(
        stdout.contains("redis.url = \"redis://:***@127.0.0.1:"),
        "{stdout}"
    );
}
