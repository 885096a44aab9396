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
