//! Writes the invented sample documents to a directory, for `scripts/load.sh`.
//!
//! The load script measures the release binary against nginx on loopback rather than the
//! built-in demo upstream, so that "download the page" has an independent, well-known cost to
//! compare against (SPEC, "Performance targets"). nginx needs the pages as files; this lays them
//! out so one document root serves both platforms:
//!
//! - `@<uniqueId>`: the short-video profile pages (~365 KB, current page shape), plus
//!   `@no_such_user_404`, the platform's "no such user" page;
//! - `@bench.user_00` .. `@bench.user_63`: the public sample renamed, so a cache-off run can
//!   spread over distinct names (concurrent lookups of one name share one fetch even then);
//! - `api/<username>.json`: the photo-share profile JSON (`try_files` maps the query to it);
//! - `big.bin`: 64 MiB of filler, an oversized upstream body;
//! - `bomb.gz`: about 1 MiB of gzip that inflates to 1 GiB of zeros, served with
//!   `Content-Encoding: gzip`. It is compressed streaming, 64 KiB at a time.
//!
//! Usage: `cargo run --release --example sample_pages -- DIR`

use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::write::GzEncoder;
use stand_in::photo_share as ps;
use stand_in::short_video::{self as sv, DEFAULT_PAGE_SIZE, Era::Universal, NOT_FOUND_USER};

/// How many renamed copies of the public short-video sample to write.
const BENCH_USERS: usize = 64;
/// Size of the oversized plain body.
const BIG_BODY_BYTES: u64 = 64 << 20;
/// Inflated size of the gzip bomb.
const BOMB_INFLATED_BYTES: usize = 1 << 30;
/// The photo-share JSON size the demo upstream serves, kept the same here.
const PHOTO_SHARE_JSON_BYTES: usize = 64 * 1024;

fn main() -> io::Result<()> {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: sample_pages DIR");
        std::process::exit(2);
    };
    fs::create_dir_all(dir.join("api"))?;

    for user in sv::sample_users() {
        let page = sv::profile_page(Universal, &user, DEFAULT_PAGE_SIZE);
        fs::write(dir.join(format!("@{}", user.unique_id)), page)?;
    }
    for i in 0..BENCH_USERS {
        let unique_id: &'static str = Box::leak(format!("bench.user_{i:02}").into_boxed_str());
        let user = sv::SampleUser {
            unique_id,
            ..sv::PUBLIC_USER
        };
        let page = sv::profile_page(Universal, &user, DEFAULT_PAGE_SIZE);
        fs::write(dir.join(format!("@{unique_id}")), page)?;
    }
    let missing = sv::not_found_page(Universal, NOT_FOUND_USER);
    fs::write(dir.join(format!("@{NOT_FOUND_USER}")), missing)?;

    for user in [ps::PUBLIC_USER, ps::PRIVATE_USER] {
        let json = ps::web_profile_info(&user, PHOTO_SHARE_JSON_BYTES);
        fs::write(
            dir.join("api").join(format!("{}.json", user.username)),
            json,
        )?;
    }

    let mut big = BufWriter::new(File::create(dir.join("big.bin"))?);
    io::copy(&mut io::repeat(b' ').take(BIG_BODY_BYTES), &mut big)?;
    big.into_inner()?.sync_all()?;

    write_bomb(&dir.join("bomb.gz"))?;
    println!("sample pages written to {}", dir.display());
    Ok(())
}

/// Streams `BOMB_INFLATED_BYTES` of zeros through a gzip encoder into `path`.
fn write_bomb(path: &Path) -> io::Result<()> {
    let file = BufWriter::new(File::create(path)?);
    let mut gz = GzEncoder::new(file, Compression::best());
    let chunk = vec![0u8; 64 * 1024];
    for _ in 0..BOMB_INFLATED_BYTES / chunk.len() {
        gz.write_all(&chunk)?;
    }
    gz.finish()?.into_inner()?.sync_all()
}
