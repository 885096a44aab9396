//! `extract PLATFORM FILE|DIR`: what the service would answer for saved upstream documents,
//! the first thing to run when a platform changes its pages.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::platform::Platform;
use crate::saved;

/// Folders with more files than this get a progress bar, when standard error is a terminal.
const PROGRESS_BAR_FROM: usize = 20;

/// For a file: the body on stdout (exit 0), or the problem document on stderr (exit 1); for a
/// folder, one line per file and a summary (see [`extract_folder`]). Exit 2 when a file or the
/// folder cannot be read.
pub fn extract(platform: Platform, path: &Path, username: Option<&str>) -> ExitCode {
    if path.is_dir() {
        return extract_folder(platform, path);
    }
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(err) => {
            eprintln!("profile-lookup: cannot read {}: {err}", path.display());
            return ExitCode::from(2);
        }
    };
    // Written with `writeln!` so a closed pipe (`| head`) is an exit, not a panic.
    match saved::extract(platform, &bytes, username) {
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

/// Every saved document in `dir` (sorted by name, `*.meta.json` sidecars skipped), one line
/// each, then a summary; exit 1 when any file gave no profile, 2 when the folder or a file
/// could not be read.
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
    let (mut readable, mut failed, mut unreadable) = (0usize, 0usize, 0usize);
    let mut out = std::io::stdout().lock();
    for path in &files {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let line = match std::fs::read(path) {
            Ok(bytes) => {
                let (ok, text) = saved::summary(platform, &bytes);
                if ok {
                    readable += 1;
                } else {
                    failed += 1;
                }
                format!("{}\t{text}", name.escape_debug())
            }
            Err(err) => {
                unreadable += 1;
                format!("{}\tcannot read: {err}", name.escape_debug())
            }
        };
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
        "{} files: {readable} with a profile, {failed} without, {unreadable} unreadable",
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

/// The saved documents of `dir`, sorted by name: every file but the `*.meta.json` sidecars.
fn saved_documents(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && !p.to_string_lossy().ends_with(".meta.json"))
        .collect();
    files.sort();
    Ok(files)
}
