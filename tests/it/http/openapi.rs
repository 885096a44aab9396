//! The OpenAPI document is the contract: an accidental change to it must fail a test.
//!
//! `tests/snapshots/openapi.json` is the approved document. After a deliberate change, approve
//! it with `cargo run --example openapi_snapshot` and review the diff: no test writes it, so no
//! test run (CI's included) can approve a change by itself.

use serde_json::Value;

const SNAPSHOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots/openapi.json");

#[test]
fn the_document_matches_the_approved_snapshot() {
    let current = profile_lookup::http::openapi::document_json();
    let approved = std::fs::read_to_string(SNAPSHOT).expect("the approved snapshot exists");
    let (current, approved): (Value, Value) = (
        serde_json::from_str(&current).unwrap(),
        serde_json::from_str(&approved).unwrap(),
    );
    if let Some(diff) = first_difference("", &approved, &current) {
        panic!(
            "the OpenAPI document differs from {SNAPSHOT} at {diff}; if the change is \
             deliberate, run `cargo run --example openapi_snapshot` and review `git diff`"
        );
    }
}

/// The first place (a JSON pointer, with both values) where `current` differs from `approved`.
fn first_difference(at: &str, approved: &Value, current: &Value) -> Option<String> {
    match (approved, current) {
        (Value::Object(a), Value::Object(c)) => {
            let keys = a.keys().chain(c.keys().filter(|k| !a.contains_key(*k)));
            keys.into_iter().find_map(|k| {
                let (a, c) = (
                    a.get(k).unwrap_or(&Value::Null),
                    c.get(k).unwrap_or(&Value::Null),
                );
                first_difference(&format!("{at}/{k}"), a, c)
            })
        }
        (Value::Array(a), Value::Array(c)) if a.len() == c.len() => a
            .iter()
            .zip(c)
            .enumerate()
            .find_map(|(i, (a, c))| first_difference(&format!("{at}/{i}"), a, c)),
        _ if approved == current => None,
        _ => Some(format!("{at:?}: approved {approved}, current {current}")),
    }
}

#[test]
fn a_difference_is_named_by_where_it_is() {
    let approved = serde_json::json!({"paths": {"/a": {"get": 1}}, "tags": [1, 2]});
    let changed = serde_json::json!({"paths": {"/a": {"get": 2}}, "tags": [1, 2]});
    assert_eq!(first_difference("", &approved, &approved), None);
    assert_eq!(
        first_difference("", &approved, &changed).as_deref(),
        Some("\"/paths//a/get\": approved 1, current 2")
    );
}

#[test]
fn the_document_states_the_contract() {
    let doc: Value = serde_json::from_str(&profile_lookup::http::openapi::document_json()).unwrap();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
    for (path, min, max) in [
        ("/short-video/profile/{username}", 2, 24),
        ("/photo-share/profile/{username}", 1, 30),
    ] {
        let op = &doc["paths"][path]["get"];
        assert_eq!(op["security"][0]["bearer"], serde_json::json!([]), "{path}");
        let param = &op["parameters"][0];
        assert_eq!(param["schema"]["minLength"], min, "{path}");
        assert_eq!(param["schema"]["maxLength"], max, "{path}");
        assert!(param["schema"]["pattern"].is_string(), "{path}");
        for status in ["200", "400", "401", "404", "429", "500", "503"] {
            assert!(op["responses"][status].is_object(), "{path} {status}");
        }
        assert!(op["responses"]["404"]["content"]["application/problem+json"].is_object());
    }
    let stats = &doc["components"]["schemas"]["ShortVideoStats"]["properties"];
    for count in [
        "followerCount",
        "followingCount",
        "heart",
        "heartCount",
        "videoCount",
        "diggCount",
    ] {
        let ty = &stats[count]["type"];
        assert!(
            ty.as_array()
                .is_some_and(|t| t.contains(&Value::from("null"))),
            "{count}: {ty}"
        );
    }
    let count = &doc["components"]["schemas"]["Count"]["properties"]["count"]["type"];
    assert!(
        count
            .as_array()
            .is_some_and(|t| t.contains(&Value::from("null"))),
        "{count}"
    );
}

/// 403 `profile_restricted` is an answer of the platforms that restrict profiles (short-video
/// status 209002; on either platform, a login wall blame places on the name alone); the
/// README's problem table names it too.
#[test]
fn the_restricted_problem_is_documented_where_it_is_answered() {
    let doc: Value = serde_json::from_str(&profile_lookup::http::openapi::document_json()).unwrap();
    let forbidden = |path: &str| doc["paths"][path]["get"]["responses"]["403"].clone();
    for path in [
        "/short-video/profile/{username}",
        "/photo-share/profile/{username}",
    ] {
        let documented = forbidden(path);
        let description = documented["description"].as_str().unwrap_or_default();
        assert!(
            description.contains("profile_restricted"),
            "{path}: {documented}"
        );
        assert!(documented["content"]["application/problem+json"].is_object());
    }
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"));
    assert!(readme.unwrap().contains("| 403 | `profile_restricted` |"));
}

/// Issue 8 asked whether counts are declared `int64` for `u64` values: confirmed. A platform
/// count above `i64::MAX` is served as is, outside what the document promises. The fix (a
/// `uint64` format on the count fields in `src/platform/mod.rs`, then a deliberate snapshot
/// refresh) belongs to the platform module's owner; un-ignore this test with it.
#[test]
fn counts_are_declared_wide_enough_for_what_is_served() {
    let Some(real) = crate::support::real("instagram/web_profile_info_2022_megadeth.json") else {
        return;
    };
    let capture = std::fs::read_to_string(real).expect("a present capture is readable");
    let at = capture
        .find("\"edge_followed_by\"")
        .expect("a follower count");
    let digits_start = at + capture[at..].find(|c: char| c.is_ascii_digit()).unwrap();
    let digits_len = capture[digits_start..]
        .find(|c: char| !c.is_ascii_digit())
        .unwrap();
    let huge = format!(
        "{}{}{}",
        &capture[..digits_start],
        u64::MAX,
        &capture[digits_start + digits_len..]
    );
    let body = profile_lookup::saved::extract(
        profile_lookup::platform::Platform::PhotoShare,
        huge.as_bytes(),
        None,
    )
    .expect("the capture extracts");
    let served: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(served["edge_followed_by"]["count"], u64::MAX);
    let doc: Value = serde_json::from_str(&profile_lookup::http::openapi::document_json()).unwrap();
    let count = &doc["components"]["schemas"]["Count"]["properties"]["count"];
    assert_ne!(count["format"], "int64", "{count}");
}

/// The document's `pattern` is the username rule as a regex; `Username::parse` is the rule
/// as code. Every string of the rule's alphabet (and a few characters outside it) must get
/// the same answer from both, so the contract cannot drift from what the service accepts.
#[test]
fn the_documented_pattern_is_the_rule_the_service_applies() {
    use profile_lookup::platform::Platform;
    use profile_lookup::username::{PATTERN, Username};
    use proptest::prelude::*;

    let pattern = fancy_regex::Regex::new(PATTERN).expect("the pattern compiles");
    let doc: Value = serde_json::from_str(&profile_lookup::http::openapi::document_json()).unwrap();
    assert_eq!(
        doc["paths"]["/photo-share/profile/{username}"]["get"]["parameters"][0]["schema"]["pattern"],
        PATTERN
    );
    // The whole alphabet and a few outsiders; then only `a`, `.` and `_`, where the dot rules
    // (first, last, two in a row) are met in almost every case.
    for alphabet in ["[a-z_.A-Z0-9/@%-]{1,30}", "[a._]{1,8}"] {
        let mut runner = proptest::test_runner::TestRunner::default();
        runner
            .run(&alphabet, |raw| {
                let documented = pattern.is_match(&raw).expect("no backtracking limit");
                let accepted = Username::parse(Platform::PhotoShare, &raw).is_ok();
                prop_assert_eq!(documented, accepted, "{:?}", raw);
                Ok(())
            })
            .unwrap();
    }
    for raw in [
        "a", "a.b", "_", "a..b", ".a", "a.", "a_b.c_", "A.B.C", "a/b", "",
    ] {
        assert_eq!(
            pattern.is_match(raw).unwrap() && !raw.is_empty(),
            Username::parse(Platform::PhotoShare, raw).is_ok(),
            "{raw:?}"
        );
    }
}
