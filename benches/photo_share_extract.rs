//! Photo-share extraction against the bare serde parse of the same JSON.
//!
//! SPEC target: extracting the profile costs at most 1.5x `serde_json::from_slice::<Value>` of
//! the embedded JSON alone. Each group times the extractor on a document and the bare parse of
//! the JSON it embeds. The real captures are read in place from `../shared/fixtures/real` and
//! skipped with a notice when absent.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

use profile_lookup::html;
use profile_lookup::platform::photo_share::extract::{from_api, from_page};
use profile_lookup::platform::{Platform, Reading};
use profile_lookup::username::Username;
use stand_in::photo_share as samples;

const REAL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/fixtures/real");

fn capture(rel: &str) -> Option<Vec<u8>> {
    let path = PathBuf::from(REAL).join(rel);
    let bytes = std::fs::read(&path);
    if bytes.is_err() {
        eprintln!("skipping: real capture {} unavailable", path.display());
    }
    bytes.ok()
}

fn name(raw: &str) -> Username {
    Username::parse(Platform::PhotoShare, raw).expect("valid name")
}

/// Times `extract` on `doc` against the bare `Value` parse of `json`, after checking that the
/// extractor really finds the profile (a benchmark of a failing path would flatter it).
fn compare(
    c: &mut Criterion,
    group_name: &str,
    doc: &[u8],
    json: &[u8],
    extract: fn(
        &[u8],
        &Username,
    ) -> Reading<profile_lookup::platform::photo_share::PhotoShareProfile>,
    asked: &Username,
) {
    assert!(
        matches!(extract(doc, asked), Reading::Found(_)),
        "{group_name}: no profile"
    );
    let mut group = c.benchmark_group(group_name);
    group.throughput(Throughput::Bytes(doc.len() as u64));
    group.bench_function("extract", |b| b.iter(|| extract(black_box(doc), asked)));
    group.bench_function("serde_value_parse", |b| {
        b.iter(|| serde_json::from_slice::<serde_json::Value>(black_box(json)))
    });
    group.finish();
}

/// The JSON text of the data-sjs script that holds the profile.
fn xig_json(page: &[u8]) -> Vec<u8> {
    html::scripts(page)
        .filter(|s| s.has_attr("data-sjs"))
        .find(|s| memchr::memmem::find(s.text, b"\"xig_user_by_username\":{\"ai").is_some())
        .map(|s| s.text.to_vec())
        .unwrap_or_default()
}

/// The JSON text of the data-sjs script that holds the moved user.
fn moved_json(page: &[u8]) -> Vec<u8> {
    let key = format!("\"{}\":{{", samples::MOVED_USER_KEY);
    html::scripts(page)
        .find(|s| memchr::memmem::find(s.text, key.as_bytes()).is_some())
        .map(|s| s.text.to_vec())
        .unwrap_or_default()
}

/// The JSON of `window._sharedData = …;`.
fn shared_data_json(page: &[u8]) -> Vec<u8> {
    html::scripts(page)
        .find_map(|s| {
            let text = s.text.strip_prefix(b"window._sharedData = ")?;
            Some(text.strip_suffix(b";").unwrap_or(text).to_vec())
        })
        .unwrap_or_default()
}

fn benches(c: &mut Criterion) {
    if let Some(body) = capture("instagram/web_profile_info_2022_megadeth.json") {
        compare(
            c,
            "api_real_megadeth_323k",
            &body,
            &body,
            |doc, asked| from_api(doc, asked),
            &name("megadeth"),
        );
    }

    let user = samples::PUBLIC_USER;
    let asked = name(user.username);
    let api = samples::web_profile_info(&user, 1_000_000);
    compare(
        c,
        "api_sample_1m",
        api.as_bytes(),
        api.as_bytes(),
        |doc, asked| from_api(doc, asked),
        &asked,
    );

    let page = samples::xig_profile_page(&user, 1_000_000);
    let json = xig_json(page.as_bytes());
    compare(
        c,
        "page_xig_sample_1m",
        page.as_bytes(),
        &json,
        |doc, asked| from_page(doc, asked),
        &asked,
    );

    // The user under a key no known place uses: only the anchored search reads it.
    let page = samples::moved_user_page(&user, 1_000_000);
    let json = moved_json(page.as_bytes());
    compare(
        c,
        "page_moved_anchored_1m",
        page.as_bytes(),
        &json,
        |doc, asked| from_page(doc, asked),
        &asked,
    );

    if let Some(page) = capture("instagram/shareddata_profile_page_2021-04_tanshio.html") {
        let json = shared_data_json(&page);
        compare(
            c,
            "page_shared_data_real_tanshio",
            &page,
            &json,
            |doc, asked| from_page(doc, asked),
            &name("_tanshio_"),
        );
    }
}

criterion_group!(photo_share, benches);
criterion_main!(photo_share);
