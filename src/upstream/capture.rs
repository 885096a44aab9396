//! Drift capture: pages that were fetched but could not be read, kept for `extract`.
//!
//! When a platform changes its pages, the first sign is `extraction_failed`. With
//! `upstream.capture_dir` set, each such document is saved there as the platform sent it
//! (already capped at `upstream.max_body_bytes`), beside a JSON sidecar `NAME.meta.json` with
//! the platform, username, time, URL, HTTP status, the response headers of an allow-list
//! ([`KEPT_HEADERS`]: what describes the body, its caching and rate limits; never a cookie, a
//! claim or any other token, whatever its name), and the verdict. `profile-lookup extract PLATFORM FILE` then shows what the extractor makes of it,
//! and `extract PLATFORM DIR` summarises the whole folder.
//!
//! The folder never holds more than `capture_max_files` documents: after each save the oldest
//! go first (names start with the capture time in UTC, `20261128T064512.123Z-…`, so name order
//! is age order). Saving happens
//! on a blocking thread, one at a time, off the lookup's path; a capture that finds the writer
//! busy is skipped and counted, never queued.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use reqwest::header::HeaderMap;
use tokio::sync::Semaphore;

use super::Response;
use crate::config::UpstreamConfig;

/// `profile_lookup_captures_total{platform, result}`: documents saved (`saved`) or not
/// (`skipped`: the writer was busy; `failed`: the disk refused).
pub const CAPTURES: &str = "profile_lookup_captures_total";
/// The suffix of a sidecar.
pub const SIDECAR_SUFFIX: &str = ".meta.json";
/// The response headers a sidecar keeps: what the body is (type, length, coding, language),
/// how it may be cached, where a redirect went, and the platform's rate-limit signals. Every
/// other header is dropped, whatever it is called: platforms hand out session tokens in headers
/// of their own naming (`x-ig-set-www-claim`, `ig-set-authorization`, …), and a capture folder
/// is read by people and tools that must never see one.
pub const KEPT_HEADERS: [&str; 12] = [
    "content-type",
    "content-length",
    "content-encoding",
    "content-language",
    "cache-control",
    "age",
    "date",
    "expires",
    "last-modified",
    "vary",
    "location",
    "retry-after",
];
/// Header name prefixes a sidecar keeps too: the rate-limit families (`ratelimit-policy`,
/// `x-ratelimit-remaining`, …).
const KEPT_PREFIXES: [&str; 2] = ["ratelimit", "x-ratelimit-"];
/// How long the capture time that starts a name is: UTC to the millisecond,
/// `20261128T064512.123Z` ([`crate::utc::file_stamp`]), so name order is age order.
const STAMP_LEN: usize = 20;
/// How many digits started the names of earlier versions (microseconds since 1970): such files
/// still count towards the cap, and sort before every stamped one.
const OLD_TIME_DIGITS: usize = 17;

/// Where unreadable documents go; `None` from [`Capture::new`] when capture is off.
#[derive(Debug)]
pub struct Capture {
    dir: PathBuf,
    max_files: usize,
    writer: Arc<Semaphore>,
    sequence: AtomicU64,
}

/// What a capture records besides the document itself.
#[derive(Debug, serde::Serialize)]
struct Sidecar<'a> {
    platform: &'a str,
    username: &'a str,
    time: String,
    url: &'a str,
    status: u16,
    headers: Vec<(&'a str, String)>,
    verdict: &'a str,
}

impl Capture {
    /// The capture of `[upstream]`, or `None` when `capture_dir` is empty.
    pub fn new(upstream: &UpstreamConfig) -> Option<Arc<Self>> {
        let dir = upstream.capture_dir()?;
        Some(Arc::new(Self {
            dir: dir.to_owned(),
            max_files: upstream.capture_max_files.max(1),
            writer: Arc::new(Semaphore::new(1)),
            sequence: AtomicU64::new(0),
        }))
    }

    /// Saves `response` (fetched for `username` on `platform`, read as `verdict`) in the
    /// background. Returns at once.
    pub fn save(&self, platform: &'static str, username: &str, response: &Response, verdict: &str) {
        let Ok(permit) = self.writer.clone().try_acquire_owned() else {
            metrics::counter!(CAPTURES, "platform" => platform, "result" => "skipped").increment(1);
            return;
        };
        let now = std::time::SystemTime::now();
        let stamp = crate::utc::file_stamp(now);
        let n = self.sequence.fetch_add(1, Ordering::Relaxed) % 1000;
        let ext = if looks_like_json(&response.body) {
            "json"
        } else {
            "html"
        };
        let stem = format!("{stamp}-{n:03}-{platform}-{username}");
        let sidecar = Sidecar {
            platform,
            username,
            time: httpdate::fmt_http_date(now),
            url: response.url.as_str(),
            status: response.status.as_u16(),
            headers: kept_headers(&response.headers),
            verdict,
        };
        let meta = serde_json::to_vec_pretty(&sidecar).unwrap_or_default();
        let body = response.body.clone();
        let (dir, max_files) = (self.dir.clone(), self.max_files);
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let saved = write(&dir, &stem, ext, &body, &meta).and_then(|()| prune(&dir, max_files));
            let result = match saved {
                Ok(()) => "saved",
                Err(e) => {
                    tracing::warn!(dir = %dir.display(), error = %e, "could not save a capture");
                    "failed"
                }
            };
            metrics::counter!(CAPTURES, "platform" => platform, "result" => result).increment(1);
        });
    }
}

fn looks_like_json(body: &[u8]) -> bool {
    body.iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| matches!(b, b'{' | b'['))
}

/// The response headers a sidecar keeps ([`KEPT_HEADERS`], [`KEPT_PREFIXES`]); names arrive
/// lower-case.
fn kept_headers(headers: &HeaderMap) -> Vec<(&str, String)> {
    headers
        .iter()
        .filter(|(name, _)| {
            let name = name.as_str();
            KEPT_HEADERS.contains(&name) || KEPT_PREFIXES.iter().any(|p| name.starts_with(p))
        })
        .map(|(name, value)| {
            (
                name.as_str(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect()
}

/// What `extract` reads back from a sidecar: whose document it is. A field a sidecar lacks is
/// `None` (an operator's hand-written sidecar may name only the platform).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
pub struct SidecarFacts {
    /// The platform the document was fetched from (its label, `short-video`, …).
    pub platform: Option<String>,
    /// The username it was fetched for.
    pub username: Option<String>,
}

/// The sidecar of the document at `document` (`NAME.html` or `NAME.json` → `NAME.meta.json`),
/// read: `Ok(None)` when there is none, an error when it cannot be read or is not a sidecar.
pub fn read_sidecar(document: &Path) -> Result<Option<SidecarFacts>, String> {
    let Some(name) = document.file_name().and_then(|n| n.to_str()) else {
        return Ok(None);
    };
    let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    let path = document.with_file_name(format!("{stem}{SIDECAR_SUFFIX}"));
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read its sidecar: {e}")),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| format!("its sidecar is not one: {e}"))
}

/// Writes the document, then its sidecar (so a sidecar always has its document).
fn write(dir: &Path, stem: &str, ext: &str, body: &[u8], meta: &[u8]) -> std::io::Result<()> {
    std::fs::write(dir.join(format!("{stem}.{ext}")), body)?;
    std::fs::write(dir.join(format!("{stem}{SIDECAR_SUFFIX}")), meta)
}

/// Removes the oldest captures beyond `max_files`, with their sidecars. Only files named as
/// captures are touched: whatever else an operator keeps in the folder stays.
fn prune(dir: &Path, max_files: usize) -> std::io::Result<()> {
    let mut documents: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| is_capture(name) && !name.ends_with(SIDECAR_SUFFIX))
        .collect();
    if documents.len() <= max_files {
        return Ok(());
    }
    documents.sort_unstable();
    let excess = documents.len() - max_files;
    for name in &documents[..excess] {
        let _ = std::fs::remove_file(dir.join(name));
        if let Some((stem, _)) = name.rsplit_once('.') {
            let _ = std::fs::remove_file(dir.join(format!("{stem}{SIDECAR_SUFFIX}")));
        }
    }
    Ok(())
}

/// Whether `name` is a capture's: it starts with a capture time ([`STAMP_LEN`], or the digits of
/// an earlier version) and a `-`.
fn is_capture(name: &str) -> bool {
    let bytes = name.as_bytes();
    let stamped = bytes.len() > STAMP_LEN
        && bytes[STAMP_LEN] == b'-'
        && bytes[..STAMP_LEN].iter().enumerate().all(|(i, b)| match i {
            8 => *b == b'T',
            15 => *b == b'.',
            19 => *b == b'Z',
            _ => b.is_ascii_digit(),
        });
    let old = bytes.len() > OLD_TIME_DIGITS
        && bytes[OLD_TIME_DIGITS] == b'-'
        && bytes[..OLD_TIME_DIGITS].iter().all(u8::is_ascii_digit);
    stamped || old
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::SET_COOKIE;

    fn response(body: &'static str) -> Response {
        let mut headers = HeaderMap::new();
        headers.insert(SET_COOKIE, "csrftoken=secret-cookie".parse().unwrap());
        headers.insert("content-type", "text/html".parse().unwrap());
        Response {
            status: reqwest::StatusCode::OK,
            headers,
            url: "http://127.0.0.1:1/@someone".parse().unwrap(),
            body: bytes::Bytes::from_static(body.as_bytes()),
        }
    }

    fn files(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    async fn settle(capture: &Capture) {
        // The writer's one permit is free again once the background save is done.
        let _ = capture.writer.acquire().await.unwrap();
    }

    #[tokio::test]
    async fn saves_the_document_and_a_sidecar_without_cookies_and_keeps_the_cap() {
        let dir = std::env::temp_dir().join(format!("capture-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("notes.txt"), "the operator's own file").unwrap();
        let config = UpstreamConfig {
            capture_dir: dir.clone(),
            capture_max_files: 2,
            ..UpstreamConfig::default()
        };
        let capture = Capture::new(&config).expect("on");
        for i in 0..4 {
            let body = if i == 3 {
                "{\"odd\":true}"
            } else {
                "<html>odd</html>"
            };
            capture.save(
                "short-video",
                "someone",
                &response(body),
                "extraction_failed: x",
            );
            settle(&capture).await;
        }
        let names = files(&dir);
        assert_eq!(
            names.len(),
            5,
            "two documents, two sidecars, notes: {names:?}"
        );
        assert!(names.contains(&"notes.txt".to_owned()));
        assert!(
            names
                .iter()
                .any(|n| n.ends_with("-short-video-someone.json"))
        );
        let sidecar = names.iter().find(|n| n.ends_with(SIDECAR_SUFFIX)).unwrap();
        let meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join(sidecar)).unwrap()).unwrap();
        assert_eq!(meta["platform"], "short-video");
        assert_eq!(meta["username"], "someone");
        assert_eq!(meta["status"], 200);
        assert_eq!(meta["verdict"], "extraction_failed: x");
        let text = meta.to_string();
        assert!(
            !text.contains("secret-cookie") && !text.contains("set-cookie"),
            "{text}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[tokio::test]
    async fn a_sidecar_keeps_only_the_allowed_headers_whatever_the_others_are_called() {
        let dir = tempfile::Builder::new()
            .prefix("capture-allow-")
            .tempdir()
            .unwrap();
        let config = UpstreamConfig {
            capture_dir: dir.path().to_owned(),
            ..UpstreamConfig::default()
        };
        let capture = Capture::new(&config).expect("on");
        let mut response = response("<html>odd</html>");
        for (name, value) in [
            ("x-ig-set-www-claim", "hmac.secret-claim"),
            ("ig-set-authorization", "Bearer secret-bearer"),
            ("x-csrftoken", "secret-csrf"),
            ("x-session-token", "secret-session"),
            ("content-length", "16"),
            ("content-encoding", "gzip"),
            ("cache-control", "private, no-cache"),
            ("retry-after", "30"),
            ("x-ratelimit-remaining", "0"),
        ] {
            response.headers.insert(
                name.parse::<reqwest::header::HeaderName>().unwrap(),
                value.parse().unwrap(),
            );
        }
        capture.save("photo-share", "someone", &response, "unreadable: x");
        settle(&capture).await;
        let sidecar = files(dir.path())
            .into_iter()
            .find(|n| n.ends_with(SIDECAR_SUFFIX))
            .unwrap();
        let meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.path().join(sidecar)).unwrap()).unwrap();
        let mut kept: Vec<&str> = meta["headers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|pair| pair[0].as_str().unwrap())
            .collect();
        kept.sort_unstable();
        assert_eq!(
            kept,
            [
                "cache-control",
                "content-encoding",
                "content-length",
                "content-type",
                "retry-after",
                "x-ratelimit-remaining"
            ]
        );
        assert!(!meta.to_string().contains("secret"), "{meta}");
    }

    #[test]
    fn capture_names_sort_by_age() {
        assert!(is_capture("20261128T064512.123Z-000-short-video-a.html"));
        assert!(is_capture("01700000000000000-000-short-video-a.html"));
        assert!(!is_capture("notes.txt"));
        assert!(!is_capture("20261128T064512.123Z.txt"));
        // An earlier version's name is older than any stamped one.
        assert!("01795849112315979-004-x" < "20261128T064512.123Z-000-x");
        assert!(looks_like_json(b"  {\"a\":1}"));
        assert!(!looks_like_json(b"<!doctype html>"));
    }
}
