//! `profile-lookup canary` as an operator runs it: one round against loopback stand-ins, a
//! table or JSON, and the exit code that says what to do (0 all ok, 1 a source changed, 2 only
//! blocks or unreachable sources, 3 settings it cannot use).

use std::process::Output;

use axum::http::StatusCode;
use serde_json::Value;
use stand_in::photo_share as ps;
use stand_in::short_video as sv;

use crate::canary::rounds::stand_ins;
use crate::support::binary::Binary;
use crate::support::routers::plain;
use crate::support::{Upstream, closed_port, spawn_upstream, temp_file, test_redis};

/// A config with short-video at `short`, photo-share at `photo`, quick retries, and `canary`
/// as the `[canary]` section's body.
fn config(short: &str, photo: &str, canary: &str) -> tempfile::NamedTempFile {
    let text = format!(
        "[short_video]\nbase_url = \"http://{short}\"\n\
         [photo_share]\nbase_url = \"http://{photo}\"\n\
         [retry]\nbase_delay_ms = 10\nmax_delay_ms = 50\nmax_total_ms = 500\n\
         [upstream]\ntimeout_ms = 2000\n\
         [canary]\n{canary}\n"
    );
    temp_file("canary-cli-", ".toml", text.as_bytes())
}

/// `profile-lookup canary ARGS` with only `env` from the service's variables; off the test's
/// runtime, so the stand-ins it serves keep answering.
async fn canary(args: Vec<String>, env: Vec<(&'static str, String)>) -> Output {
    tokio::task::spawn_blocking(move || {
        let mut command = Binary::new(&["canary"]).env_remove("PROFILE_LOOKUP_CONFIG");
        for arg in args {
            command = command.arg(arg);
        }
        for (key, _) in std::env::vars() {
            if key.starts_with("PROFILE_LOOKUP__") {
                command = command.env_remove(&key);
            }
        }
        for (key, value) in env {
            command = command.env(key, value);
        }
        command.output()
    })
    .await
    .unwrap()
}

fn with_config(file: &tempfile::NamedTempFile, more: &[&str]) -> Vec<String> {
    let mut args = vec!["--config".to_owned(), file.path().display().to_string()];
    args.extend(more.iter().map(|a| (*a).to_owned()));
    args
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A platform that answers every request 429.
async fn refusing() -> Upstream {
    spawn_upstream(plain(StatusCode::TOO_MANY_REQUESTS, "slow down")).await
}

/// A config with short-video and photo-share on their stand-ins and `canary` as the
/// `[canary]` section's body.
fn on_stand_ins(short: &Upstream, photo: &Upstream, canary: &str) -> tempfile::NamedTempFile {
    config(&short.addr.to_string(), &photo.addr.to_string(), canary)
}

const BOTH: &str =
    "short_video = [\"sunny.kitchen.lab\", \"quiet.fox_22\"]\nphoto_share = [\"lumen.trails\"]";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_source_ok_exits_0_with_a_row_per_probe() {
    let (short, photo) = stand_ins().await;
    let file = on_stand_ins(&short.upstream, &photo.upstream, BOTH);
    let out = canary(with_config(&file, &["--json"]), Vec::new()).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        out.stderr.is_empty(),
        "no progress line off a terminal: {}",
        text(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let probes = report["probes"].as_array().unwrap();
    assert_eq!(
        probes.len(),
        2 * 2 + 3,
        "two accounts on two sources, one on three (loggedout, page, json)"
    );
    let probe = |account: &str, source: &str| {
        probes
            .iter()
            .find(|p| p["account"] == account && p["source"] == source)
            .unwrap_or_else(|| panic!("no probe of {account} on {source}"))
    };
    let private_embed = probe("quiet.fox_22", "embed");
    assert_eq!(private_embed["verdict"], "skipped");
    assert_eq!(private_embed["status"], 400);
    assert_eq!(private_embed["reason"], "embed_private_or_missing");
    let page = probe("sunny.kitchen.lab", "page");
    assert_eq!(page["verdict"], "ok");
    assert_eq!(page["status"], 200);
    assert!(page["bytes"].as_u64().unwrap() > 100_000, "{page}");
    assert!(
        report["sources"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["verdict"] == "ok")
    );
    assert_eq!(report["exit"], 0);

    // The table: a header, a row per probe, a line per source.
    let out = canary(with_config(&file, &[]), Vec::new()).await;
    assert_eq!(out.status.code(), Some(0));
    let table = text(&out.stdout);
    let header = table.lines().next().unwrap();
    for column in [
        "PLATFORM", "SOURCE", "ACCOUNT", "VERDICT", "STATUS", "BYTES", "MS", "REASON",
    ] {
        assert!(header.contains(column), "{header}");
    }
    assert_eq!(table.lines().count(), 1 + 7 + 1, "{table}");
    assert!(
        table.contains("short-video page: ok; short-video embed: ok"),
        "{table}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_source_exits_1_and_one_platform_can_be_asked_alone() {
    let (short, photo) = stand_ins().await;
    short.drift.set(true);
    let file = on_stand_ins(&short.upstream, &photo.upstream, BOTH);
    let out = canary(with_config(&file, &["--json"]), Vec::new()).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let sources = report["sources"].as_array().unwrap();
    let page = sources
        .iter()
        .find(|s| s["source"] == "page" && s["platform"] == "short-video");
    assert_eq!(page.unwrap()["verdict"], "changed");
    // Photo-share alone: its sources read, so 0; and short-video was not asked.
    short.upstream.forget();
    let only = canary(
        with_config(&file, &["--platform", "photo-share"]),
        Vec::new(),
    )
    .await;
    assert_eq!(only.status.code(), Some(0), "{}", text(&only.stdout));
    assert_eq!(short.upstream.hits(), 0, "{:?}", short.upstream.paths());
    assert!(!text(&only.stdout).contains("short-video"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocks_alone_exit_2() {
    let refusing = refusing().await;
    let file = on_stand_ins(&refusing, &refusing, BOTH);
    let out = canary(with_config(&file, &[]), Vec::new()).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("blocked"));
    assert!(!text(&out.stdout).contains("changed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accounts_come_from_the_environment_too() {
    let (short, photo) = stand_ins().await;
    let file = on_stand_ins(&short.upstream, &photo.upstream, "");
    let env = vec![(
        "PROFILE_LOOKUP__CANARY__PHOTO_SHARE",
        format!(
            "{}, {}",
            ps::PUBLIC_USER.username,
            ps::BUSINESS_USER.username
        ),
    )];
    let out = canary(with_config(&file, &["--json"]), env).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let accounts: Vec<&str> = report["probes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["account"].as_str().unwrap())
        .collect();
    assert_eq!(
        accounts,
        [
            ps::PUBLIC_USER.username,
            ps::BUSINESS_USER.username,
            ps::PUBLIC_USER.username,
            ps::BUSINESS_USER.username,
            ps::PUBLIC_USER.username,
            ps::BUSINESS_USER.username
        ],
        "two accounts on each of the three sources"
    );
    let _ = sv::PUBLIC_USER;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_it_cannot_use_exit_3_and_say_why() {
    let cases: [(&str, &str); 4] = [
        ("", "no canary account is configured"),
        ("short_video = [\"a\"]", "canary.short_video[0]"),
        (
            "photo_share = \"lumen.trails\"",
            "canary.photo_share must be a list",
        ),
        (
            "intervl_seconds = 5",
            "unknown key `canary.intervl_seconds`; did you mean `interval_seconds`?",
        ),
    ];
    for (body, said) in cases {
        let file = config("127.0.0.1:9", "127.0.0.1:9", body);
        let out = canary(with_config(&file, &[]), Vec::new()).await;
        assert_eq!(out.status.code(), Some(3), "{body}: {}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains(said),
            "{body}: {}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty());
    }
    let out = canary(
        vec!["--config".into(), "/nonexistent/canary.toml".into()],
        Vec::new(),
    )
    .await;
    assert_eq!(out.status.code(), Some(3));
    let jitter = config(
        "127.0.0.1:9",
        "127.0.0.1:9",
        "jitter = 0.9\nshort_video = [\"ab\"]",
    );
    let out = canary(with_config(&jitter, &[]), Vec::new()).await;
    assert_eq!(out.status.code(), Some(3));
    assert!(
        text(&out.stderr).contains("canary.jitter is 0.9"),
        "{}",
        text(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_run_by_hand_against_a_fleet_writes_neither_its_breaker_nor_its_rests() {
    let Some(redis) = test_redis::start() else {
        return;
    };
    let addr = refusing().await.addr;
    // A breaker that one blocked lookup opens, and proxies that refuse every connection (a
    // lookup rests each): the probes meet both, directly and through the proxies.
    let closed = [closed_port().await, closed_port().await].map(|p| format!("\"http://{p}\""));
    for proxies in [String::new(), closed.join(", ")] {
        let toml = format!(
            "[short_video]\nbase_url = \"http://{addr}\"\n\
             [photo_share]\nbase_url = \"http://{addr}\"\n\
             [retry]\nbase_delay_ms = 10\nmax_delay_ms = 50\nmax_total_ms = 500\n\
             [upstream]\ntimeout_ms = 2000\nproxies = [{proxies}]\n\
             [breaker]\nfailure_threshold = 1\n\
             [redis]\nurl = \"{}\"\nkey_prefix = \"cli:\"\n\
             [canary]\n{BOTH}\n",
            redis.url()
        );
        let file = temp_file("canary-cli-", ".toml", toml.as_bytes());
        let out = canary(with_config(&file, &[]), Vec::new()).await;
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
        // Directly, the platform blocks; through proxies that refuse every connection, the
        // platform was never asked: unreachable, never a block.
        let expected = if proxies.is_empty() {
            "blocked"
        } else {
            "unreachable"
        };
        assert!(
            text(&out.stdout).contains(expected),
            "{}",
            text(&out.stdout)
        );
    }
    let keys = redis.keys("cli:*").await;
    assert!(
        keys.iter()
            .all(|k| !k.contains("{b:") && !k.contains("{r:")),
        "the canary wrote the fleet's breaker or a proxy's rest: {keys:?}"
    );
    assert!(
        keys.iter().any(|k| k.contains("{o:")),
        "its requests were counted against the fleet's outbound budget: {keys:?}"
    );
}

#[tokio::test]
async fn an_unreachable_platform_says_why_in_the_reason_column() {
    let closed = closed_port().await;
    let file = config(&closed.to_string(), &closed.to_string(), BOTH);
    let out = canary(
        with_config(&file, &["--platform", "short-video"]),
        Vec::new(),
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let stdout = text(&out.stdout);
    // The probes' rows (an account in each), not the summary line under them.
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("  unreachable  ") && l.contains("sunny.kitchen.lab"))
        .collect();
    assert_eq!(rows.len(), 2, "page and embed: {stdout}");
    for row in rows {
        // The REASON column starts with the category.
        assert!(row.contains("  refused: "), "{row}");
        assert!(
            !row.contains(&closed.port().to_string()),
            "no address: {row}"
        );
    }
}
