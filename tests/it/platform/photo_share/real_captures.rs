//! Every real photo-share capture in `../shared/fixtures/real` gives the right verdict.
//!
//! The captures are third-party data and are read in place, never copied; when the folder is
//! absent (a checkout without it) each test prints a notice and passes.

use crate::support::{capture, photo_share_name as name};
use profile_lookup::platform::Reading;
use profile_lookup::platform::photo_share::PhotoShareProfile;
use profile_lookup::platform::photo_share::extract::{
    block_signal, from_api, from_page, from_page_answer,
};

fn profile(verdict: Reading<PhotoShareProfile>) -> PhotoShareProfile {
    match verdict {
        Reading::Found(p) => p,
        other => panic!("expected a profile, got {other:?}"),
    }
}

/// Id, username, followers, following, posts.
type Facts = (&'static str, &'static str, u64, u64, u64);

fn assert_facts(p: &PhotoShareProfile, facts: Facts) {
    let (id, username, followers, following, posts) = facts;
    assert_eq!(p.id, id);
    assert_eq!(p.username, username);
    assert_eq!(p.edge_followed_by.count, Some(followers));
    assert_eq!(p.edge_follow.count, Some(following));
    assert_eq!(p.edge_owner_to_timeline_media.count, Some(posts));
    assert!(
        p.profile_pic_url.starts_with("https://"),
        "{}",
        p.profile_pic_url
    );
    assert!(!p.profile_pic_url.contains("\\u0026"));
}

#[test]
fn web_profile_info_2022_megadeth() {
    let Some(body) = capture("instagram/web_profile_info_2022_megadeth.json") else {
        return;
    };
    let p = profile(from_api(&body, &name("megadeth")));
    assert_facts(&p, ("343260652", "megadeth", 2_520_817, 122, 2328));
    assert!(!p.full_name.is_empty() && !p.biography.is_empty());
    assert!(p.is_verified && !p.is_private);
    assert!(p.profile_pic_url_hd.contains("s320x320"));
    assert!(matches!(
        from_api(&body, &name("megadeth_fan")),
        Reading::Unreadable(_)
    ));
}

#[test]
fn web_profile_info_2024_field_set() {
    let cases: [(&str, &str, Facts, bool); 3] = [
        (
            "instagram/web_profile_info_2024-03_nasa_loggedin.json",
            "NASA",
            ("528817151", "nasa", 97_956_738, 77, 4116),
            true,
        ),
        (
            "instagram/web_profile_info_2024-03_anasaiaofficial_loggedin.json",
            "anasaiaofficial",
            ("50269116275", "anasaiaofficial", 740_983, 508, 467),
            false,
        ),
        (
            "instagram/web_profile_info_2024-03_regina_steinhauer_loggedin.json",
            "regina_steinhauer",
            ("2057642850", "regina_steinhauer", 14_668, 935, 800),
            false,
        ),
    ];
    for (file, asked, facts, verified) in cases {
        let Some(body) = capture(file) else {
            return;
        };
        let p = profile(from_api(&body, &name(asked)));
        assert_facts(&p, facts);
        assert_eq!(p.is_verified, verified, "{file}");
        assert!(!p.is_private, "{file}");
        assert!(
            p.profile_pic_url.contains("&_nc_ht="),
            "{file}: JSON escapes decoded"
        );
    }
}

#[test]
fn shared_data_page_2021_tanshio() {
    let Some(body) = capture("instagram/shareddata_profile_page_2021-04_tanshio.html") else {
        return;
    };
    let p = profile(from_page(&body, &name("_TANSHIO_")));
    assert_facts(&p, ("2953904858", "_tanshio_", 22, 9, 1));
    assert!(!p.full_name.is_empty());
    assert_eq!(p.biography, "");
    assert!(!p.is_verified && !p.is_private);
    assert!(matches!(
        from_page(&body, &name("tanshio")),
        Reading::Unreadable(_)
    ));
}

#[test]
fn shell_page_2022_megadeth_is_unreadable() {
    let Some(body) = capture("instagram/profile_page_shell_2022_megadeth.html") else {
        return;
    };
    assert_eq!(
        from_page(&body, &name("megadeth")),
        Reading::Unreadable("no profile in page".to_owned())
    );
    // As a lookup's answer, the shell (it defers the profile to `web_profile_info`) is the
    // platform refusing us: 429, never 500.
    assert_eq!(
        from_page_answer(&body, &name("megadeth")),
        Reading::blocked("app_shell")
    );
}

#[test]
fn quoted_401_bodies_are_require_login() {
    for file in [
        "quoted/instagram_401_require_login_2023.json",
        "quoted/instagram_401_require_login_2025-01.json",
    ] {
        let Some(body) = capture(file) else {
            return;
        };
        assert_eq!(block_signal(401, &body), Some("require_login"), "{file}");
        assert_eq!(
            from_api(&body, &name("anyone")),
            Reading::blocked("require_login"),
            "{file}"
        );
    }
}

#[test]
fn every_instagram_capture_is_covered() {
    let dir = std::path::PathBuf::from(crate::support::REAL).join("instagram");
    if !crate::support::real_captures_provided() {
        eprintln!("NOTICE: {} is absent; skipping", dir.display());
        return;
    }
    let entries = std::fs::read_dir(&dir).expect("the provided captures hold instagram/");
    let known = [
        "shareddata_profile_page_2021-04_tanshio.html",
        "web_profile_info_2022_megadeth.json",
        "profile_page_shell_2022_megadeth.html",
        "web_profile_info_2024-03_nasa_loggedin.json",
        "web_profile_info_2024-03_anasaiaofficial_loggedin.json",
        "web_profile_info_2024-03_regina_steinhauer_loggedin.json",
    ];
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        assert!(known.contains(&file.as_str()), "untested capture {file}");
    }
}
