//! Every registered platform is everywhere a platform must be: a platform given its line in
//! `src/registry.rs` (which also gives it its arm in `platform::with_site`) but missing from
//! one of the places below (its stand-in in `stand-in/` among them) fails here, and the
//! message names the place. (What the compiler checks, such as the folder and site type the
//! line names, needs no test.)

use std::collections::BTreeSet;

use profile_lookup::config::Settings;
use profile_lookup::platform::{Platform, Site, SiteJob, with_site};

use crate::support::TestApp;

fn repo_file(rel: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn labels_and_sections_are_unique() {
    let labels: BTreeSet<_> = Platform::ALL.iter().map(|p| p.as_str()).collect();
    let sections: BTreeSet<_> = Platform::ALL.iter().map(|p| p.section()).collect();
    assert_eq!(
        labels.len(),
        Platform::ALL.len(),
        "src/registry.rs: a label twice"
    );
    assert_eq!(
        sections.len(),
        Platform::ALL.len(),
        "src/registry.rs: a section twice"
    );
}

/// The built-in defaults are `config/default.toml`: each platform's section there is its
/// whole default (a missing one is named here before the defaults fail to load).
#[test]
fn every_platform_has_its_section_in_the_default_config_file() {
    let text = repo_file("config/default.toml");
    let sections: Vec<(Platform, Vec<&str>)> = Platform::ALL
        .iter()
        .map(|&p| {
            let header = format!("[{}]", p.section());
            let lines = text
                .lines()
                .skip_while(|l| l.trim() != header)
                .skip(1)
                .take_while(|l| !l.trim_start().starts_with('['))
                .collect();
            (p, lines)
        })
        .collect();
    for (p, lines) in &sections {
        assert!(
            !lines.is_empty(),
            "config/default.toml has no [{}] section for {p}",
            p.section()
        );
    }
    let keys = serde_json::to_value(Settings::default().platform(Platform::ALL[0])).unwrap();
    let keys: Vec<&String> = keys.as_object().unwrap().keys().collect();
    for (p, lines) in &sections {
        for key in &keys {
            assert!(
                lines.iter().any(|l| l.starts_with(&format!("{key} ="))),
                "config/default.toml's [{}] does not list {key}",
                p.section()
            );
        }
    }
}

#[test]
fn every_platform_has_its_own_settings_section() {
    let mut s = Settings::default();
    for (i, p) in Platform::ALL.iter().enumerate() {
        s.platform_mut(*p).max_concurrency = 100 + i;
    }
    for (i, p) in Platform::ALL.iter().enumerate() {
        assert_eq!(
            s.platform(*p).max_concurrency,
            100 + i,
            "Settings::platform({p}) is another platform's section"
        );
    }
}

#[test]
fn every_platform_section_is_validated_and_range_checked_by_name() {
    for p in Platform::ALL {
        let mut s = Settings::default();
        s.platform_mut(*p).max_queue_ms = u64::MAX;
        let err = s.validate().unwrap_err().to_string();
        assert!(
            err.contains(&format!("{}.max_queue_ms", p.section())),
            "config/platforms.rs does not range-check {p}: {err}"
        );
        let mut s = Settings::default();
        s.platform_mut(*p).proxies = vec!["ftp://nope".into()];
        let err = s.validate().unwrap_err().to_string();
        assert!(
            err.contains(&format!("{}.proxies[0]", p.section())),
            "config validation does not check {p}'s proxies: {err}"
        );
    }
}

#[test]
fn every_platform_is_in_the_openapi_document_and_the_cli() {
    let doc = profile_lookup::http::document();
    for p in Platform::ALL {
        let path = format!("/{p}/profile/{{username}}");
        let op = doc
            .paths
            .paths
            .get(&path)
            .and_then(|item| item.get.as_ref());
        let op = op.unwrap_or_else(|| panic!("the OpenAPI document has no {path}"));
        assert_eq!(
            op.operation_id.as_deref(),
            Some(format!("{}_profile", p.section()).as_str())
        );
        use clap::ValueEnum;
        assert!(
            Platform::from_str(p.as_str(), false).is_ok(),
            "the CLI does not take {p}"
        );
    }
}

/// Which of a platform's documents its site asks by the account id (`Document::by_id`).
struct AskedById;

impl SiteJob for AskedById {
    type Output = Vec<(&'static str, bool)>;
    fn run<S: Site>(self) -> Self::Output {
        use profile_lookup::platform::site::Document;
        S::DOCUMENTS
            .iter()
            .map(|d| (d.label(), d.by_id()))
            .collect()
    }
}

/// The registry line's `by_id` (what the configuration checks the order of `sources` by) and
/// the site's `Document::by_id` (what the fetcher asks by) agree for every source of every
/// platform.
#[test]
fn the_sources_asked_by_id_are_the_same_in_the_registry_and_the_site() {
    for &p in Platform::ALL {
        let docs = with_site(p, AskedById);
        for source in p.sources() {
            let (_, by_id) = docs
                .iter()
                .find(|(label, _)| label == source)
                .unwrap_or_else(|| panic!("{p}'s site has no document {source}"));
            assert_eq!(
                p.source_by_id(source),
                *by_id,
                "{p}'s {source}: src/registry.rs's by_id and the site's Document::by_id disagree"
            );
        }
    }
    assert!(Platform::PhotoShare.source_by_id("graphql"));
}

/// The example username the API documents for a platform.
struct ExampleName;

impl SiteJob for ExampleName {
    type Output = &'static str;
    fn run<S: Site>(self) -> &'static str {
        S::API.example_username
    }
}

/// Each platform has a stand-in under its label (and every stand-in plays a platform), whose
/// drifted source is one of the platform's, and which serves the demo's first suggested name
/// and the API's example name as profiles: the demo, the tests, the load scripts and the
/// `/docs` page's "Try it out" have something to look up on every platform.
#[tokio::test]
async fn every_platform_has_a_stand_in_and_demo_calls_the_service_answers() {
    if !crate::support::own_process(concat!(
        module_path!(),
        "::every_platform_has_a_stand_in_and_demo_calls_the_service_answers"
    )) {
        return;
    }
    for stand_in in stand_in::PLATFORMS {
        let label = stand_in.label();
        let p = Platform::from_label(label);
        let p = p.unwrap_or_else(|| panic!("stand-in/src/lib.rs: {label} is no platform"));
        assert!(
            p.source(stand_in.drifted_source()).is_some(),
            "{p}'s stand-in drifts a source the platform does not have"
        );
    }
    for &p in Platform::ALL {
        let stand_in = stand_in::platform(p.as_str());
        let stand_in =
            stand_in.unwrap_or_else(|| panic!("stand-in/src/lib.rs: no stand-in for {p}"));
        let calls = stand_in.demo_calls();
        assert!(!calls.is_empty(), "{p}'s stand-in suggests no demo call");
        let app = TestApp::on(stand_in.router()).start().await;
        for name in [calls[0].username.as_str(), with_site(p, ExampleName)] {
            let status = app.lookup(p, name).await.status();
            assert_eq!(status, 200, "{p}'s stand-in does not serve {name}");
        }
        // This test's process is its own: its two lookups on `p` are counted under its label
        // (the cache asked once for each, whether or not the stand-in was).
        let metrics = app.metrics().await;
        let asked = format!("profile_lookup_cache_lookups_total{{platform=\"{p}\",");
        let counted = crate::support::series_sum(&metrics, &asked);
        assert_eq!(
            counted, 2.0,
            "{p}'s lookups are not counted under its label: {metrics}"
        );
    }
}
