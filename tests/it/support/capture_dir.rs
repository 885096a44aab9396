//! A folder for drift capture (`upstream.capture_dir`) that does not exist yet, so the service
//! creates it, inside a temporary folder removed when the test ends; and what landed in it.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// A capture folder the service is to create; removed with its parent on drop.
pub struct CaptureDir {
    _parent: tempfile::TempDir,
    path: PathBuf,
}

impl CaptureDir {
    /// A new, absent capture folder.
    pub fn new() -> Self {
        let parent = tempfile::Builder::new()
            .prefix("it-capture-")
            .tempdir()
            .expect("a temporary folder");
        let path = parent.path().join("captures");
        Self {
            _parent: parent,
            path,
        }
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The names of the files in it, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.path)
            .map(|d| {
                d.map(|e| e.unwrap().file_name().into_string().unwrap())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    /// Waits (at most 5 s) for a file named `{…}{about}{…}{ending}` to land; fails naming the
    /// files there when none does.
    pub async fn expect_capture(&self, about: &str, ending: &str) {
        let landed = |n: &String| n.contains(about) && n.ends_with(ending);
        let seen = super::eventually(std::time::Duration::from_secs(5), || {
            self.names().iter().any(landed)
        })
        .await;
        assert!(seen, "no capture of {about} ({ending}): {:?}", self.names());
    }

    /// Waits (at most 5 s) for a sidecar whose verdict says `what`; fails naming the verdicts
    /// there when none does.
    pub async fn expect_verdict(&self, what: &str) {
        let verdicts = || -> Vec<String> {
            self.sidecars()
                .iter()
                .map(|meta| meta["verdict"].as_str().unwrap_or_default().to_owned())
                .collect()
        };
        let seen = super::eventually(std::time::Duration::from_secs(5), || {
            verdicts().iter().any(|v| v.contains(what))
        })
        .await;
        assert!(seen, "no capture says {what:?}: {:?}", verdicts());
    }

    /// Every sidecar (`*.meta.json`) in it, read.
    pub fn sidecars(&self) -> Vec<Value> {
        self.names()
            .iter()
            .filter(|n| n.ends_with(".meta.json"))
            .filter_map(|n| serde_json::from_slice(&std::fs::read(self.path.join(n)).ok()?).ok())
            .collect()
    }
}
