//! A platform's sources: asked in the configured order, a source left out of
//! `<section>.sources` never asked, and every answer that came from a source says which in
//! `x-source` (a cached answer keeps the source that gave it).

use profile_lookup::config::Settings;
use profile_lookup::platform::{Platform, Site, SiteJob, with_site};
use stand_in::photo_share as ps;
use stand_in::short_video as sv;

use crate::support::{PhotoShare, ShortVideo, TestApp};

#[tokio::test]
async fn every_answer_says_which_source_gave_it_and_a_hit_keeps_it() {
    let app = TestApp::on(sv::router()).start().await;
    let name = sv::PUBLIC_USER.unique_id;
    app.lookup(ShortVideo, name)
        .await
        .expect_status(200)
        .expect_header("x-source", "page");
    app.lookup(ShortVideo, name)
        .await
        .expect_header("x-cache", "hit")
        .about("a hit keeps its source")
        .expect_header("x-source", "page");
    // A page without state: the second source answers, and says so.
    let name = sv::SHELL_PAGE_USER.unique_id;
    app.lookup(ShortVideo, name)
        .await
        .expect_status(200)
        .expect_header("x-source", "embed");
    app.lookup(ShortVideo, name)
        .await
        .expect_header("x-source", "embed");

    let app = TestApp::on(ps::router()).start().await;
    app.lookup(PhotoShare, ps::PUBLIC_USER.username)
        .await
        .expect_status(200)
        .expect_header("x-source", "json");
    // The JSON says "no user", which only the page confirms: the page's 404 answers.
    app.lookup(PhotoShare, ps::NOT_FOUND_NAME)
        .await
        .expect_status(404)
        .expect_header("x-source", "page");
}

#[tokio::test]
async fn a_source_left_out_of_the_config_is_never_asked() {
    let app = TestApp::on(ps::router())
        .with(|s| s.platform_mut(Platform::PhotoShare).sources = vec!["page".into()])
        .start()
        .await;
    app.lookup(PhotoShare, ps::PUBLIC_USER.username)
        .await
        .expect_status(200)
        .expect_header("x-source", "page");
    let json = app.upstream().paths();
    assert!(!json.iter().any(|p| p.starts_with("/api/")), "{json:?}");
    assert_eq!(app.hits(), 1, "one request: the page");
}

#[test]
fn sources_are_validated_by_name_at_load() {
    let mut s = Settings::default();
    s.platform_mut(Platform::ShortVideo).sources = vec!["embed".into(), "json".into()];
    let err = s.validate().unwrap_err().to_string();
    assert!(
        err.contains(
            r#"short_video.sources[1] "json" is not a source of short-video: use ["page", "embed"]"#
        ),
        "{err}"
    );
    for (sources, says) in [
        (vec![], "photo_share.sources is empty"),
        (vec!["html".to_owned()], "photo_share.sources[0] \"html\""),
        (
            vec!["page".to_owned(), "page".to_owned()],
            "photo_share.sources[1] \"page\" is listed twice",
        ),
    ] {
        let mut s = Settings::default();
        s.platform_mut(Platform::PhotoShare).sources = sources;
        let err = s.validate().unwrap_err().to_string();
        assert!(err.contains(says), "{err}");
    }
}

/// Why a list is refused whose source asked by id has no source asked by name before it.
const NEEDS_A_NAME: &str = "asks by the account id an earlier source learned: \
                            list a source that asks by name before it";

/// A source asked by the account id (photo-share's `graphql`, by pk) has nothing to ask until
/// a source asked by name learned the id: a list where it comes first, or alone, is refused
/// at load (before, every lookup answered 500 without a request), naming the key and why;
/// after any source asked by name it loads.
#[test]
fn a_source_asked_by_id_needs_a_source_asked_by_name_before_it() {
    let with = |sources: &[&str]| {
        let mut s = Settings::default();
        s.platform_mut(Platform::PhotoShare).sources =
            sources.iter().map(|s| (*s).to_owned()).collect();
        s.validate().map(|_| ()).map_err(|e| e.to_string())
    };
    for sources in [
        &["graphql"][..],
        &["graphql", "loggedout"],
        &["graphql", "page", "json"],
    ] {
        let err = with(sources).expect_err(&format!("{sources:?} is refused"));
        assert!(
            err.contains(&format!(
                "photo_share.sources[0] \"graphql\" {NEEDS_A_NAME}"
            )),
            "{sources:?}: {err}"
        );
    }
    for sources in [
        &["loggedout", "graphql"][..],
        &["page", "graphql"],
        &["json", "graphql"],
        &["loggedout", "page", "json", "graphql"],
        &["json", "graphql", "page"],
    ] {
        assert_eq!(with(sources), Ok(()), "{sources:?}");
    }
}

/// `serve` with the source asked by id alone refuses to start, and says why.
#[test]
fn serve_refuses_a_source_asked_by_id_alone() {
    let config = crate::support::temp_file(
        "ps-graphql-alone",
        ".toml",
        format!(
            "[server]\nlisten = \"127.0.0.1:0\"\n[auth]\napi_keys = [\"{key}\"]\n\
             [photo_share]\nsources = [\"graphql\"]\n",
            key = crate::support::KEY,
        )
        .as_bytes(),
    );
    let out = crate::support::binary::Binary::serve_with(config.path())
        .output_within(std::time::Duration::from_secs(20))
        .expect("serve refuses to start: it started");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "photo_share.sources[0] \"graphql\" {NEEDS_A_NAME}"
        )),
        "{stderr}"
    );
}

/// Each site's documents are its registry line's sources, in the same order: the names the
/// config, `x-source` and the metrics use are the ones the code asks.
#[test]
fn each_sites_documents_are_its_registered_sources() {
    struct Labels;
    impl SiteJob for Labels {
        type Output = Vec<&'static str>;
        fn run<S: Site>(self) -> Vec<&'static str> {
            use profile_lookup::platform::site::Document;
            S::DOCUMENTS.iter().map(|d| d.label()).collect()
        }
    }
    for &p in Platform::ALL {
        assert_eq!(
            with_site(p, Labels),
            p.sources(),
            "{p}: Site::DOCUMENTS and the registry line disagree"
        );
    }
}
