//! The OpenAPI document is the contract: an accidental change to it must fail a test.
//!
//! `tests/snapshots/openapi.json` is the approved document. After a deliberate change, refresh
//! it with `UPDATE_SNAPSHOTS=1 cargo test --test it openapi` and review the diff.

use serde_json::Value;

const SNAPSHOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots/openapi.json");

#[test]
fn the_document_matches_the_approved_snapshot() {
    let current = profile_lookup::http::openapi::document_json();
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(SNAPSHOT, format!("{current}\n")).unwrap();
    }
    let approved = std::fs::read_to_string(SNAPSHOT).expect("the approved snapshot exists");
    let (current, approved): (Value, Value) = (
        serde_json::from_str(&current).unwrap(),
        serde_json::from_str(&approved).unwrap(),
    );
    assert!(
        current == approved,
        "the OpenAPI document changed; if deliberate, run UPDATE_SNAPSHOTS=1 cargo test --test it openapi and review"
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
