//! Writes the service's OpenAPI document to `tests/snapshots/openapi.json`, the approved
//! contract that `cargo test` compares against.
//!
//! The one way to approve a deliberate contract change: tests never write the snapshot, so a
//! test run (CI's included) can only fail on a change, never approve it. Review the diff after.
//!
//! Usage: `cargo run --example openapi_snapshot`

fn main() -> std::io::Result<()> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots/openapi.json");
    std::fs::write(
        path,
        format!("{}\n", profile_lookup::http::openapi::document_json()),
    )?;
    println!("wrote {path}; review it with git diff before committing");
    Ok(())
}
