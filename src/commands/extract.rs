//! `extract PLATFORM FILE|DIR`: what the service would answer for saved upstream documents,
//! the first thing to run when a platform changes its pages.
//!
//! A document drift capture saved has a sidecar (`NAME.meta.json`) saying which platform it
//! came from and which user it was fetched for; `extract` reads it as the service did: as that
//! platform's, about that user. Other platforms' documents in a folder are skipped and counted.
//! Without a sidecar or `--username`, the document says whose it is ([`saved::whose`]), or
//! `extract` refuses to guess. `-` reads one document from standard input.

use std::io::{IsTerminal, Read as _, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::platform::Platform;
use crate::saved;
use crate::upstream::capture::{SIDECAR_SUFFIX, SidecarFacts, read_sidecar};

/// Folders with more files than this get a progress bar, when standard error is a terminal.
const PROGRESS_BAR_FROM: usize = 20;

/// For a file (`-`: standard input): the body on stdout (exit 0), or the problem document on
/// stderr (exit 1, its detail saying why); for a folder, one line per file and a summary (see
/// [`extract_folder`]). Exit 2 when a file, its sidecar or the folder cannot be read, or the
/// sidecar names another platform; exit 3 when nothing says whose the document is and
/// reading it would be a guess.
///
/// `username` (`--username`) wins over the sidecar's; without either, the document says whose
/// it is ([`saved::whose`]).
pub fn extract(platform: Platform, path: &Path, username: Option<&str>) -> ExitCode {
    if path == Path::new(STDIN) {
        let mut bytes = Vec::new();
        if let Err(err) = std::io::stdin().lock().read_to_end(&mut bytes) {
            eprintln!("profile-lookup: cannot read standard input: {err}");
            return ExitCode::from(2);
        }
        return extract_document(platform, &bytes, username);
    }
    if path.is_dir() {
        return extract_folder(platform, path);
    }
    let facts = match read_sidecar(path) {
        Ok(facts) => facts.unwrap_or_default(),
        Err(why) => {
            eprintln!("profile-lookup: {}: {why}", path.display());
            return ExitCode::from(2);
        }
    };
    if let Some(other) = other_platform(platform, &facts) {
        eprintln!(
            "profile-lookup: {} was fetched from {other} (its sidecar says so), not {}",
            path.display(),
            platform.as_str()
        );
        return ExitCode::from(2);
    }
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(err) => {
            eprintln!("profile-lookup: cannot read {}: {err}", path.display());
            return ExitCode::from(2);
        }
    };
    extract_document(platform, &bytes, username.or(facts.username.as_deref()))
}

/// The path that names standard input.
const STDIN: &str = "-";

/// One document, about `username`, else whoever the document says it is about.
fn extract_document(platform: Platform, bytes: &[u8], username: Option<&str>) -> ExitCode {
    let owner = match username {
        Some(name) => Some(name.to_owned()),
        None => match saved::whose(platform, bytes) {
            Ok(owner) => owner,
            Err(why) => {
                eprintln!("profile-lookup: {why}");
                return ExitCode::from(super::USAGE_MISTAKE);
            }
        },
    };
    // Written with `writeln!` so a closed pipe (`| head`) is an exit, not a panic.
    match saved::extract(platform, bytes, owner.as_deref()) {
        Ok(body) => {
            let _ = writeln!(std::io::stdout().lock(), "{body}");
            ExitCode::SUCCESS
        }
        Err(problem) => {
            let _ = writeln!(std::io::stderr().lock(), "{problem}");
            ExitCode::FAILURE
        }
    }
}

/// The platform a sidecar names when it is not `platform`.
fn other_platform(platform: Platform, facts: &SidecarFacts) -> Option<&str> {
    facts
        .platform
        .as_deref()
        .filter(|named| *named != platform.as_str())
}

/// What became of one document of a folder.
enum Read {
    /// A profile came out; the line to print.
    Profile(String),
    /// No profile; the line says what the service would have answered.
    NoProfile(String),
    /// The document or its sidecar could not be read.
    Unreadable(String),
    /// Its sidecar names another platform.
    OtherPlatform,
}

/// Every saved document in `dir` (sorted by name; the `*.meta.json` sidecars are not documents),
/// one line each, read as its sidecar says (documents of other platforms skipped and counted), then a
/// summary; exit 1 when any file gave no profile, 2 when the folder, a file or a sidecar could
/// not be read.
pub fn extract_folder(platform: Platform, dir: &Path) -> ExitCode {
    let files = match saved_documents(dir) {
        Ok(files) => files,
        Err(err) => {
            eprintln!(
                "profile-lookup: cannot read the folder {}: {err}",
                dir.display()
            );
            return ExitCode::from(2);
        }
    };
    let bar = (files.len() > PROGRESS_BAR_FROM && std::io::stderr().is_terminal()).then(|| {
        indicatif::ProgressBar::new(files.len() as u64).with_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        )
    });
    let (mut readable, mut failed, mut unreadable, mut skipped) = (0usize, 0usize, 0, 0);
    let mut out = std::io::stdout().lock();
    for path in &files {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let text = match read_one(platform, path) {
            Read::Profile(text) => {
                readable += 1;
                text
            }
            Read::NoProfile(text) => {
                failed += 1;
                text
            }
            Read::Unreadable(text) => {
                unreadable += 1;
                text
            }
            Read::OtherPlatform => {
                skipped += 1;
                if let Some(bar) = &bar {
                    bar.inc(1);
                }
                continue;
            }
        };
        let line = format!("{}\t{text}", name.escape_debug());
        match &bar {
            Some(bar) => {
                bar.suspend(|| writeln!(out, "{line}")).ok();
                bar.inc(1);
            }
            None => {
                if writeln!(out, "{line}").is_err() {
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let _ = writeln!(
        out,
        "{} files: {readable} with a profile, {failed} without, {unreadable} unreadable, \
         {skipped} of another platform skipped",
        files.len()
    );
    if unreadable > 0 {
        ExitCode::from(2)
    } else if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// One document of a folder, read as its sidecar says (without one: as the named platform's,
/// about the user the document says it is about, or not read when it does not say).
fn read_one(platform: Platform, path: &Path) -> Read {
    let facts = match read_sidecar(path) {
        Ok(facts) => facts.unwrap_or_default(),
        Err(why) => return Read::Unreadable(why),
    };
    if other_platform(platform, &facts).is_some() {
        return Read::OtherPlatform;
    }
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(err) => return Read::Unreadable(format!("cannot read: {err}")),
    };
    let owner = match facts.username {
        Some(name) => Some(name),
        None => match saved::whose(platform, &bytes) {
            Ok(owner) => owner,
            Err(why) => return Read::NoProfile(why),
        },
    };
    match saved::summary(platform, &bytes, owner.as_deref()) {
        (true, text) => Read::Profile(text),
        (false, text) => Read::NoProfile(text),
    }
}

/// The saved documents of `dir`, sorted by name: every file but the `*.meta.json` sidecars.
fn saved_documents(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && !p.to_string_lossy().ends_with(SIDECAR_SUFFIX))
        .collect();
    files.sort();
    Ok(files)
}
