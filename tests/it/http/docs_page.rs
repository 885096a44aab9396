//! `GET /docs`: the Swagger UI page and its assets, served from the binary over real sockets.
//!
//! The page must work with no network at all: every file it loads comes from this service,
//! and it reads the service's own `/openapi.json`. (`scripts/docs-browser.sh` opens it in a
//! real browser; these tests check what the server sends.)

use std::time::Duration;

use crate::support::{TestApp, spawn_slow_not_found};
use axum::Router;
use axum::http::StatusCode;

/// The media type of a response, without parameters.
fn media_type(response: &reqwest::Response) -> String {
    let value = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    value.split(';').next().unwrap_or("").trim().to_owned()
}

/// Paths the page loads, taken from its own `src=` and `href=` attributes.
fn assets_of(index: &str) -> Vec<String> {
    let mut assets = Vec::new();
    for attr in ["src=\"", "href=\""] {
        let mut rest = index;
        while let Some(at) = rest.find(attr) {
            rest = &rest[at + attr.len()..];
            let end = rest.find('"').unwrap_or(rest.len());
            assets.push(rest[..end].to_owned());
            rest = &rest[end..];
        }
    }
    assets
}

#[tokio::test]
async fn docs_redirects_to_the_page_which_loads_only_its_own_assets() {
    let app = TestApp::on(Router::new()).start().await;

    let bare = app.get_anonymous("/docs").await;
    assert!(bare.status().is_redirection(), "{}", bare.status());
    assert_eq!(bare.headers()["location"], "/docs/");

    let page = app.get_anonymous("/docs/").await;
    assert_eq!(page.status(), StatusCode::OK, "no key needed");
    assert_eq!(media_type(&page), "text/html");
    let index = page.text().await.unwrap();
    assert!(index.contains("swagger-ui"), "the Swagger UI page");

    let assets = assets_of(&index);
    for expected in [
        "./swagger-ui.css",
        "./swagger-ui-bundle.js",
        "./swagger-initializer.js",
    ] {
        assert!(
            assets.iter().any(|a| a == expected),
            "{expected} in {assets:?}"
        );
    }
    for asset in &assets {
        assert!(
            !asset.contains(':') && !asset.starts_with('/'),
            "the page loads {asset} from elsewhere: the docs must work offline"
        );
        let file = asset.trim_start_matches("./");
        let response = app.get_anonymous(&format!("/docs/{file}")).await;
        assert_eq!(response.status(), StatusCode::OK, "{asset}");
        let ty = media_type(&response);
        let expected: &[&str] = match asset.rsplit('.').next() {
            Some("css") => &["text/css"],
            Some("js") => &["text/javascript", "application/javascript"],
            Some("png") => &["image/png"],
            other => panic!("an asset of unexpected kind: {other:?}"),
        };
        assert!(expected.contains(&ty.as_str()), "{asset}: {ty}");
        assert!(!response.bytes().await.unwrap().is_empty(), "{asset}");
    }
}

#[tokio::test]
async fn the_page_reads_the_services_own_document_without_the_validator() {
    let app = TestApp::on(Router::new()).start().await;
    let init = app
        .get_anonymous("/docs/swagger-initializer.js")
        .await
        .text()
        .await
        .unwrap();
    assert!(init.contains(r#""url": "/openapi.json""#), "{init}");
    // Swagger UI would otherwise send the document to validator.swagger.io for a badge.
    assert!(init.contains(r#""validatorUrl": "none""#), "{init}");
    assert!(
        !init.contains("petstore"),
        "the stock example document is replaced"
    );
    // The document it points at is the one the service serves, unchanged by the docs page.
    let doc: serde_json::Value = app
        .get_anonymous("/openapi.json")
        .await
        .json()
        .await
        .unwrap();
    assert!(
        doc["paths"].get("/docs").is_none(),
        "the page is not an API operation"
    );
    assert!(doc["paths"]["/short-video/profile/{username}"].is_object());
}

#[tokio::test]
async fn unknown_docs_files_are_404() {
    let app = TestApp::on(Router::new()).start().await;
    for path in ["/docs/no-such-file.js", "/docs/../openapi.json.bak"] {
        assert_eq!(app.get_anonymous(path).await.status(), 404, "{path}");
    }
}

#[tokio::test]
async fn the_docs_page_is_neither_shed_nor_rate_limited() {
    // Lookups hang on the upstream and fill server.max_in_flight; the page still answers.
    // Under the test settings' 2 s upstream timeout, so the lookup ends in a 404.
    let (app, busy) = TestApp::on(&spawn_slow_not_found(Duration::from_millis(1500)).await)
        .with(|s| {
            s.rate_limit.per_key_per_minute = 1;
            s.rate_limit.burst = 1;
        })
        .start_full(1)
        .await;
    assert_eq!(
        app.get("/short-video/profile/another.user").await.status(),
        503,
        "lookups are shed while the slot is taken"
    );
    for _ in 0..5 {
        assert_eq!(app.get("/docs/").await.status(), 200);
        assert_eq!(app.get("/docs/swagger-ui.css").await.status(), 200);
    }
    for lookup in busy {
        assert_eq!(lookup.await.unwrap(), 404);
    }
    assert_eq!(
        app.get("/short-video/profile/third.user").await.status(),
        429,
        "the key's quota is spent, yet the page answered every time"
    );
}

#[tokio::test]
async fn the_page_is_titled_with_the_services_name() {
    let app = TestApp::on(Router::new()).start().await;
    let page = app.get_anonymous("/docs/").await;
    assert_eq!(page.status(), StatusCode::OK);
    let index = page.text().await.unwrap();
    assert!(
        index.contains("<title>profile-lookup API</title>"),
        "{index}"
    );
    assert!(!index.contains("<title>Swagger UI</title>"), "{index}");
}
