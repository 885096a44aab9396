//! Extraction against the bare serde parse of the same embedded JSON (SPEC: ≤ 1.5×).
//!
//! Cases: (a) the project's ~1 MB current-era sample page; (b) the ~365 KB page that
//! `scripts/load.sh` serves (its markup before the state script is what the uncached path
//! tokenizes); (c) the real 917 KB SIGI page from `../shared/fixtures/real` (skipped with a
//! notice when absent); (d) the ~1 MB sample page with its state under an id no era used, which
//! only the anchored search reads (the path a moved page takes). Each case benches `extract` on the whole page, the tokenizer alone
//! (`html::scripts` to the state script) and `serde_json::from_slice::<Value>` on the state
//! script's text alone.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use profile_lookup::html;
use profile_lookup::platform::short_video::extract::extract;
use profile_lookup::platform::{Platform, Reading};
use profile_lookup::username::Username;
use stand_in::short_video::{
    self as samples, BENCH_PAGE_SIZE, DEFAULT_PAGE_SIZE, Era, MOVED_STATE_ID, PUBLIC_USER,
};

const SIGI_PAGE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/real/tiktok/sigi_state_profile_page_2022_huxleythepandapuppy.html"
);

fn case(c: &mut Criterion, label: &str, page: &[u8], script_id: &str, user: &str) {
    let requested = Username::parse(Platform::ShortVideo, user).expect("a valid name");
    assert!(
        matches!(extract(page, &requested), Reading::Found(_)),
        "{label}: the page must yield a profile"
    );
    let state = html::script_by_id(page, script_id).expect("a state script");
    let mut group = c.benchmark_group(label);
    group.throughput(Throughput::Bytes(state.len() as u64));
    group.bench_function("extract", |b| {
        b.iter(|| extract(black_box(page), black_box(&requested)))
    });
    group.bench_function("tokenize_to_state", |b| {
        b.iter(|| html::script_by_id(black_box(page), black_box(script_id)))
    });
    group.bench_function("serde_value_of_state", |b| {
        b.iter(|| serde_json::from_slice::<serde_json::Value>(black_box(state)))
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    let universal = samples::profile_page(Era::Universal, &PUBLIC_USER, BENCH_PAGE_SIZE);
    case(
        c,
        "universal_sample_1mb",
        universal.as_bytes(),
        "__UNIVERSAL_DATA_FOR_REHYDRATION__",
        PUBLIC_USER.unique_id,
    );
    let load_page = samples::profile_page(Era::Universal, &PUBLIC_USER, DEFAULT_PAGE_SIZE);
    case(
        c,
        "universal_load_page_365kb",
        load_page.as_bytes(),
        "__UNIVERSAL_DATA_FOR_REHYDRATION__",
        PUBLIC_USER.unique_id,
    );
    let moved = samples::moved_state_page(&PUBLIC_USER, BENCH_PAGE_SIZE);
    case(
        c,
        "moved_state_anchored_1mb",
        moved.as_bytes(),
        MOVED_STATE_ID,
        PUBLIC_USER.unique_id,
    );
    match std::fs::read(SIGI_PAGE) {
        Ok(page) => case(
            c,
            "sigi_real_917kb",
            &page,
            "SIGI_STATE",
            "huxleythepandapuppy",
        ),
        Err(e) => eprintln!("skipping the real SIGI page: {SIGI_PAGE} not available ({e})"),
    }
}

criterion_group!(short_video, benches);
criterion_main!(short_video);
