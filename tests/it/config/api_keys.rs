//! API keys from the environment and the file: kept as the strings they are, trimmed in lists,
//! refused with a message naming their position when no `Bearer` header could carry them, and
//! never printed in any error.
//!
//! Environment variables are process-wide, so every test here sets them
//! through [`with_env`].
//!
//! They run in a child process of their own: see [`crate::support::own_process`].

use profile_lookup::config::Settings;

use crate::support::with_env;

const KEYS: &str = "PROFILE_LOOKUP__AUTH__API_KEYS";
const DIGESTS: &str = "PROFILE_LOOKUP__AUTH__API_KEY_SHA256";

/// Loads the settings with `vars` set (and the config file env unset), then unsets them.
fn load_with(vars: &[(&str, &str)], file: Option<&str>) -> Result<Settings, String> {
    with_env(vars, ("profile-lookup-keys-", file), |path| {
        Settings::load(path).map_err(|e| e.to_string())
    })
}

#[test]
fn an_all_digit_key_from_the_environment_is_a_string() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::an_all_digit_key_from_the_environment_is_a_string"
    )) {
        return;
    }
    let s = load_with(&[(KEYS, "8675309")], None).expect("digits are a key");
    assert_eq!(s.auth.api_keys, vec!["8675309".to_string()]);
    // Forms a number parser would rewrite stay exactly as written.
    for key in ["007", "1e3", "true", "-0", "1.50", "0x1F"] {
        let s = load_with(&[(KEYS, key)], None).unwrap_or_else(|e| panic!("{key}: {e}"));
        assert_eq!(s.auth.api_keys, vec![key.to_string()], "{key}");
    }
    assert!(
        s_ok_for_serve(&[(KEYS, "8675309867530986")]),
        "serve accepts a digit key"
    );
}

fn s_ok_for_serve(vars: &[(&str, &str)]) -> bool {
    load_with(vars, None)
        .map(|s| s.validate_for_serve().is_ok())
        .unwrap_or(false)
}

#[test]
fn environment_list_items_are_trimmed() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::environment_list_items_are_trimmed"
    )) {
        return;
    }
    let s = load_with(&[(KEYS, "key-one, key-two ,\tkey-three")], None).unwrap();
    assert_eq!(s.auth.api_keys, ["key-one", "key-two", "key-three"]);
    let digest = "a".repeat(64);
    let s = load_with(
        &[(DIGESTS, &format!(" {digest} , {}", "1".repeat(64)))],
        None,
    )
    .unwrap();
    assert_eq!(s.auth.api_key_sha256, [digest, "1".repeat(64)]);
}

#[test]
fn an_all_digit_digest_from_the_environment_is_a_string() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::an_all_digit_digest_from_the_environment_is_a_string"
    )) {
        return;
    }
    let digest = "1".repeat(64);
    let s = load_with(&[(DIGESTS, &digest)], None).expect("a digit digest loads");
    assert_eq!(s.auth.api_key_sha256, vec![digest]);
}

#[test]
fn a_key_no_bearer_header_can_carry_is_refused_by_position() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::a_key_no_bearer_header_can_carry_is_refused_by_position"
    )) {
        return;
    }
    let long = "k".repeat(4097);
    for (value, position) in [
        ("gxq1, hv spq", "auth.api_keys[1]"),
        ("gxq1,,zq9w", "auth.api_keys[1]"),
        ("clé-secrète", "auth.api_keys[0]"),
        ("ok,bell\u{7}key", "auth.api_keys[1]"),
        ("ok,tab\tinside", "auth.api_keys[1]"),
        (long.as_str(), "auth.api_keys[0]"),
    ] {
        let err = load_with(&[(KEYS, value)], None).expect_err(value);
        assert!(err.contains(position), "{value:?}: {err}");
        for part in value.split(',').filter(|p| p.trim().len() > 2) {
            assert!(!err.contains(part.trim()), "the key leaked: {err}");
        }
    }
    // The same rules for keys written in the file.
    let err = load_with(&[], Some("[auth]\napi_keys = [\"fine\", \"two words\"]\n"))
        .expect_err("a key with a space");
    assert!(err.contains("auth.api_keys[1]"), "{err}");
    assert!(!err.contains("two words"), "{err}");
}

#[test]
fn no_config_error_ever_prints_a_key() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::no_config_error_ever_prints_a_key"
    )) {
        return;
    }
    const SECRET: &str = "S3cr3tKeyMaterial";
    const DIGIT_SECRET: &str = "8675309";
    let digest = "f".repeat(64);
    let env_cases: Vec<Vec<(&str, String)>> = vec![
        vec![(KEYS, format!("{SECRET} x"))],
        vec![(KEYS, format!("{SECRET},é{SECRET}"))],
        vec![(KEYS, format!("{DIGIT_SECRET}, {SECRET}\u{1b}"))],
        vec![(DIGESTS, SECRET.into())],
        vec![(DIGESTS, format!("{digest},{SECRET}"))],
        vec![(DIGESTS, DIGIT_SECRET.repeat(3))],
        // A key beside another bad value: the other value's error must not carry the key.
        vec![
            (KEYS, SECRET.into()),
            ("PROFILE_LOOKUP__CACHE__TTL_SECONDS", "soon".into()),
        ],
        vec![
            (KEYS, DIGIT_SECRET.into()),
            ("PROFILE_LOOKUP__RETRY__MAX_ATTEMPTS", "0".into()),
        ],
    ];
    let mut seen = 0;
    for vars in &env_cases {
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
        if let Err(err) = load_with(&vars, None) {
            seen += 1;
            assert_no_secret(&err, &[SECRET, DIGIT_SECRET]);
        }
    }
    let file_cases = [
        format!("[auth]\napi_keys = [{DIGIT_SECRET}]\n"),
        format!("[auth]\napi_keys = \"{SECRET}\"\n"),
        format!("[auth]\napi_keys = {DIGIT_SECRET}\n"),
        format!("[auth]\napi_keys = [\"{SECRET}\", true, {DIGIT_SECRET}.5]\n"),
        format!("[auth]\napi_keys = [\"{SECRET} \"]\n"),
        format!("[auth]\napi_key_sha256 = [\"{SECRET}\"]\n"),
        format!("[auth]\napi_key_sha256 = {DIGIT_SECRET}\n"),
        format!("[auth]\napi_keys = [\"{SECRET}\"]\n[cache]\nttl_seconds = \"x\"\n"),
    ];
    for toml in &file_cases {
        if let Err(err) = load_with(&[], Some(toml)) {
            seen += 1;
            assert_no_secret(&err, &[SECRET, DIGIT_SECRET]);
        }
    }
    assert!(
        seen >= env_cases.len() + file_cases.len() - 1,
        "nearly every case is an error ({seen})"
    );
}

fn assert_no_secret(err: &str, secrets: &[&str]) {
    for secret in secrets {
        assert!(!err.contains(secret), "error prints a key: {err}");
    }
}
