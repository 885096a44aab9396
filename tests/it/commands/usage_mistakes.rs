//! A mistake on the command line (an unknown option, a bad value, a missing argument) exits 3,
//! for every subcommand, so it never reads as one of their verdicts: `canary`'s 2 ("only
//! blocks, unreachable or missing"), `extract`'s 1 (no profile) or 2 (a file it could not
//! read), `healthcheck`'s 1 (unhealthy). `--help` and `--version` still print on stdout and
//! exit 0.

use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_profile-lookup");

/// The exit code of a usage mistake: `canary`'s code for settings it cannot use.
const USAGE_MISTAKE: i32 = 3;

/// The binary with `args`, none of the service's variables inherited from the test's
/// environment.
fn run(args: &[&str]) -> Output {
    let mut command = Command::new(BIN);
    command.args(args).env_remove("PROFILE_LOOKUP_CONFIG");
    for (key, _) in std::env::vars() {
        if key.starts_with("PROFILE_LOOKUP__") {
            command.env_remove(key);
        }
    }
    command.output().expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_usage_mistake_exits_3_with_clap_s_message_for_every_subcommand() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["canary", "--platform", "shortvideo"],
            "invalid value 'shortvideo'",
        ),
        (&["canary", "--jsno"], "unexpected argument '--jsno'"),
        (
            &["canary", "--config"],
            "a value is required for '--config <FILE>'",
        ),
        (
            &["serve", "--config"],
            "a value is required for '--config <FILE>'",
        ),
        (
            &["serve", "--listen", "127.0.0.1:1"],
            "unexpected argument '--listen'",
        ),
        (
            &["demo", "--drift-after", "3d"],
            "the unit is one of ms, s, m, h",
        ),
        (&["demo", "--listen", "nowhere"], "invalid value 'nowhere'"),
        (
            &["extract", "shortvideo", "page.html"],
            "invalid value 'shortvideo'",
        ),
        (
            &["extract", "short-video"],
            "required arguments were not provided",
        ),
        (
            &["healthcheck", "--addr", "localhost"],
            "invalid value 'localhost'",
        ),
        (&["frobnicate"], "unrecognized subcommand 'frobnicate'"),
        (&["--jsno"], "unexpected argument '--jsno'"),
        (&[], "Usage: profile-lookup <COMMAND>"),
    ];
    for (args, said) in cases {
        let out = run(args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(USAGE_MISTAKE), "{args:?}: {stderr}");
        assert!(stderr.contains(said), "{args:?}: {stderr}");
        // clap's own message, pointing at the help, as before.
        assert!(stderr.contains("--help"), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: {}", text(&out.stdout));
    }
}

#[test]
fn help_and_version_still_print_on_stdout_and_exit_0() {
    let version = run(&["--version"]);
    assert_eq!(version.status.code(), Some(0));
    assert_eq!(
        text(&version.stdout),
        format!(
            "profile-lookup {} (commit {}, features: {})\n",
            env!("CARGO_PKG_VERSION"),
            profile_lookup::build_info::COMMIT,
            profile_lookup::build_info::FEATURES
        )
    );
    // The commit is git's short hash where the build had git, else "unknown".
    let commit = profile_lookup::build_info::COMMIT;
    assert!(
        commit == "unknown" || (commit.len() >= 7 && commit.bytes().all(|b| b.is_ascii_hexdigit())),
        "{commit}"
    );
    assert!(version.stderr.is_empty());

    let cases: &[(&[&str], &str)] = &[
        (&["--help"], "Usage: profile-lookup <COMMAND>"),
        (&["help"], "Usage: profile-lookup <COMMAND>"),
        (&["canary", "--help"], "--platform <PLATFORM>"),
        (&["help", "canary"], "--platform <PLATFORM>"),
        (&["extract", "-h"], "Usage: profile-lookup extract"),
    ];
    for (args, said) in cases {
        let out = run(args);
        let stdout = text(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(stdout.contains(said), "{args:?}: {stdout}");
        assert!(out.stderr.is_empty(), "{args:?}: {}", text(&out.stderr));
    }
}
