//! A platform's sources: asked in the configured order, a source left out of
//! `<section>.sources` never asked, and every answer that came from a source says which in
//! `x-source` (a cached answer keeps the source that gave it).

use axum::Router;
use axum::extract::Request;
use profile_lookup::config::Settings;
use profile_lookup::platform::{Platform, Site, SiteJob, with_site};
use stand_in::photo_share as ps;
use stand_in::short_video as sv;

use crate::support::{settings, spawn_app, spawn_upstream};

/// The photo-share stand-in, counting the JSON requests it answers.
fn counting_json(json_hits: std::sync::Arc<std::sync::atomic::AtomicUsize>) -> Router {
    let stand_in = ps::router();
    Router::new().fallback(move |request: Request| {
        let stand_in = stand_in.clone();
        let json_hits = json_hits.clone();
        async move {
            if request.uri().path().starts_with("/api/") {
                json_hits.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            use tower::ServiceExt;
            stand_in.oneshot(request).await.unwrap()
        }
    })
}

#[tokio::test]
async fn every_answer_says_which_source_gave_it_and_a_hit_keeps_it() {
    let upstream = spawn_upstream(sv::router()).await;
    let app = spawn_app(settings(upstream.addr)).await;
    let path = format!("/short-video/profile/{}", sv::PUBLIC_USER.unique_id);
    let first = app.get(&path).await;
    assert_eq!(first.status(), 200);
    assert_eq!(first.headers()["x-source"], "page");
    let hit = app.get(&path).await;
    assert_eq!(hit.headers()["x-cache"], "hit");
    assert_eq!(hit.headers()["x-source"], "page", "a hit keeps its source");
    // A page without state: the second source answers, and says so.
    let path = format!("/short-video/profile/{}", sv::SHELL_PAGE_USER.unique_id);
    let embed = app.get(&path).await;
    assert_eq!(embed.status(), 200);
    assert_eq!(embed.headers()["x-source"], "embed");
    assert_eq!(app.get(&path).await.headers()["x-source"], "embed");

    let upstream = spawn_upstream(ps::router()).await;
    let app = spawn_app(settings(upstream.addr)).await;
    let found = app
        .get(&format!(
            "/photo-share/profile/{}",
            ps::PUBLIC_USER.username
        ))
        .await;
    assert_eq!(found.status(), 200);
    assert_eq!(found.headers()["x-source"], "json");
    // The JSON says "no user", which only the page confirms: the page's 404 answers.
    let gone = app
        .get(&format!("/photo-share/profile/{}", ps::NOT_FOUND_NAME))
        .await;
    assert_eq!(gone.status(), 404);
    assert_eq!(gone.headers()["x-source"], "page");
}

#[tokio::test]
async fn a_source_left_out_of_the_config_is_never_asked() {
    let json_hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let upstream = spawn_upstream(counting_json(json_hits.clone())).await;
    let mut s = settings(upstream.addr);
    s.platform_mut(Platform::PhotoShare).sources = vec!["page".into()];
    let app = spawn_app(s).await;
    let r = app
        .get(&format!(
            "/photo-share/profile/{}",
            ps::PUBLIC_USER.username
        ))
        .await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["x-source"], "page");
    assert_eq!(json_hits.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert_eq!(upstream.hits(), 1, "one request: the page");
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
