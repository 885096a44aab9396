//! Embeds the git commit the binary was built from (`PROFILE_LOOKUP_COMMIT`, read by
//! `src/build_info.rs`): `PROFILE_LOOKUP_COMMIT` when the build is given it (hex digits), else
//! git's short hash, else "unknown" where git or the repository is absent (a source tarball, a
//! container build without `.git`): a build never fails for want of git.

use std::process::Command;

fn main() {
    // A build without `.git` (a container's build context) may say it:
    // PROFILE_LOOKUP_COMMIT=$(git rev-parse --short HEAD) cargo build.
    println!("cargo:rerun-if-env-changed=PROFILE_LOOKUP_COMMIT");
    let given = std::env::var("PROFILE_LOOKUP_COMMIT")
        .ok()
        .filter(|c| !c.is_empty() && c.len() <= 40 && c.bytes().all(|b| b.is_ascii_hexdigit()));
    let commit = given
        .or_else(|| git(&["rev-parse", "--short", "HEAD"]))
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=PROFILE_LOOKUP_COMMIT={commit}");
    // Built again when HEAD moves: HEAD itself (a checkout) and the branch it names (a
    // commit), each only if it exists (a missing path would rebuild every time).
    let mut watched = vec!["HEAD".to_owned(), "packed-refs".to_owned()];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(branch);
    }
    for name in watched {
        if let Some(path) = git(&["rev-parse", "--git-path", &name])
            && std::path::Path::new(&path).exists()
        {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}

/// What `git ARGS` prints, trimmed, when it runs and succeeds.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (out.status.success() && !text.is_empty()).then_some(text)
}
