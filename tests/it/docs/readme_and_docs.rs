//! The README and the documents under `docs/` stay true to the repository.
//!
//! - The README's configuration table names every key of `config/default.toml` with the default
//!   written there, and no key that file lacks.
//! - The README stays short enough to read in five minutes (at most 250 lines).
//! - Every relative link, and every repository path written as code (`src/…`, `scripts/…`),
//!   leads to a file or folder that exists; a link's `#anchor` to a heading that exists.
//! - Nothing points outside the repository: no path above its root, no document it does not
//!   hold, no issue number.
//!
//! Each failure names the file and line to fix.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const README_MAX_LINES: usize = 250;

/// Top-level folders whose paths, written as code in a document, must exist.
const REPO_FOLDERS: &[&str] = &[
    "src/",
    "stand-in/",
    "tests/",
    "scripts/",
    "deploy/",
    "config/",
    "examples/",
    "benches/",
    "docs/",
    ".ci/",
    ".github/",
];

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Every document a reader is sent to: the README, `docs/*.md` and the scripts' README, as
/// (path from the repository's root, text).
fn documents() -> Vec<(String, String)> {
    let mut names = vec!["README.md".to_owned(), "scripts/README.md".to_owned()];
    let docs = std::fs::read_dir(Path::new(ROOT).join("docs")).expect("docs/ exists");
    for entry in docs {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            names.push(format!("docs/{name}"));
        }
    }
    names.sort();
    names.into_iter().map(|n| (n.clone(), read(&n))).collect()
}

/// The lines outside fenced code blocks, numbered from 1.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut in_fence = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        } else if !in_fence {
            out.push((i + 1, line));
        }
    }
    out
}

/// The contents of a line's `code spans`.
fn code_spans(line: &str) -> Vec<&str> {
    line.split('`').skip(1).step_by(2).collect()
}

/// A line's link targets, `[text](target)` and `![alt](target)`, outside code spans.
fn link_targets(line: &str) -> Vec<String> {
    let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join("");
    let mut out = Vec::new();
    let mut rest = prose.as_str();
    while let Some(at) = rest.find("](") {
        let tail = &rest[at + 2..];
        let end = tail.find(')').unwrap_or(tail.len());
        out.push(tail[..end].trim().to_owned());
        rest = &tail[end..];
    }
    out
}

/// The anchors GitHub gives a document's headings: lower case, punctuation dropped, spaces
/// turned into `-`, a repeated heading suffixed `-1`, `-2`, ….
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for (_, line) in prose_lines(text) {
        let Some(title) = line.strip_prefix('#') else {
            continue;
        };
        let title = title.trim_start_matches('#').trim();
        let slug: String = title
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut anchor = slug.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{slug}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// `target` relative to the folder `dir` (both from the repository's root), or `None` when it
/// climbs above the root.
fn resolve(dir: &Path, target: &str) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for part in dir.join(target).components() {
        match part {
            Component::Normal(p) => out.push(p),
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// `config/default.toml` as (`section.key`, value as written, line number).
///
/// The file is our own and keeps a simple layout: comments, blank lines, `[section]` headers
/// and one `key = value` per line (no inline tables, no values over several lines). That is
/// what this reads by hand; any other line fails here, so a key can never be skipped silently.
fn default_settings() -> Vec<(String, String, usize)> {
    let mut section = String::new();
    let mut out = Vec::new();
    for (i, line) in read("config/default.toml").lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.trim().to_owned();
            continue;
        }
        let (key, value) = line.split_once('=').unwrap_or_else(|| {
            panic!(
                "config/default.toml:{}: neither a comment, a [section] nor `key = value`: {line}",
                i + 1
            )
        });
        assert!(
            !section.is_empty(),
            "config/default.toml:{}: a key before any [section]",
            i + 1
        );
        out.push((
            format!("{section}.{}", key.trim()),
            value.trim().to_owned(),
            i + 1,
        ));
    }
    out
}

/// The README's configuration table (the one headed `| Key | Default | Meaning |`) as
/// `section.key` → (default, line number). A row may name several keys of one section,
/// `` `a.x` / `y` `` with defaults `` `1` / `2` ``: a later key without a section is in the
/// first one's.
fn readme_config_table(readme: &str) -> BTreeMap<String, (String, usize)> {
    let mut table = BTreeMap::new();
    let mut lines = prose_lines(readme).into_iter();
    lines
        .by_ref()
        .find(|(_, l)| l.replace(' ', "") == "|Key|Default|Meaning|")
        .expect("README.md has a table headed | Key | Default | Meaning |");
    lines.next(); // the |---| row
    for (n, line) in lines.take_while(|(_, l)| l.starts_with('|')) {
        // Cells split on `|` that is not escaped as `\|`.
        let cells: Vec<String> = line
            .replace("\\|", "\u{0}")
            .split('|')
            .map(|c| c.trim().replace('\u{0}', "|"))
            .collect();
        assert!(
            cells.len() >= 4,
            "README.md:{n}: a configuration row needs key, default and meaning"
        );
        let spans = |cell: &str| -> Vec<String> {
            cell.split(" / ")
                .map(|part| {
                    let part = part.trim();
                    part.strip_prefix('`')
                        .and_then(|p| p.strip_suffix('`'))
                        .unwrap_or_else(|| panic!("README.md:{n}: `{part}` is not one `code span`"))
                        .to_owned()
                })
                .collect()
        };
        let (keys, defaults) = (spans(&cells[1]), spans(&cells[2]));
        assert_eq!(
            keys.len(),
            defaults.len(),
            "README.md:{n}: {} keys but {} defaults",
            keys.len(),
            defaults.len()
        );
        let section = keys[0].split_once('.').map_or("", |(s, _)| s).to_owned();
        for (key, default) in keys.into_iter().zip(defaults) {
            let key = if key.contains('.') {
                key
            } else {
                format!("{section}.{key}")
            };
            if let Some((_, first)) = table.insert(key.clone(), (default, n)) {
                panic!("README.md:{n}: `{key}` is in the table twice (also line {first})");
            }
        }
    }
    table
}

#[test]
fn the_readme_configuration_table_is_default_toml() {
    let mut table = readme_config_table(&read("README.md"));
    let mut problems = Vec::new();
    for (key, value, line) in default_settings() {
        match table.remove(&key) {
            None => problems.push(format!(
                "config/default.toml:{line}: `{key}` is missing from README.md's configuration table"
            )),
            Some((default, n)) if default != value => problems.push(format!(
                "README.md:{n}: `{key}` shows default `{default}`, config/default.toml:{line} has `{value}`"
            )),
            Some(_) => {}
        }
    }
    for (key, (_, n)) in table {
        problems.push(format!(
            "README.md:{n}: `{key}` is not a key of config/default.toml"
        ));
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn the_readme_is_at_most_250_lines() {
    let lines = read("README.md").lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines; at most {README_MAX_LINES}: move detail into docs/"
    );
}

#[test]
fn links_and_repository_paths_in_the_docs_exist() {
    let docs = documents();
    let mut problems = Vec::new();
    for (doc, text) in &docs {
        let dir = Path::new(doc).parent().unwrap();
        for (n, line) in prose_lines(text) {
            for target in link_targets(line) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
                let file = if path.is_empty() {
                    Some(PathBuf::from(doc))
                } else {
                    resolve(dir, path)
                };
                let Some(file) = file else {
                    problems.push(format!(
                        "{doc}:{n}: `{target}` points outside the repository"
                    ));
                    continue;
                };
                let full = Path::new(ROOT).join(&file);
                if !full.exists() {
                    problems.push(format!("{doc}:{n}: `{target}`: no {}", file.display()));
                    continue;
                }
                if !anchor.is_empty() && file.extension().is_some_and(|e| e == "md") {
                    let text = std::fs::read_to_string(&full).unwrap();
                    if !anchors(&text).contains(anchor) {
                        problems.push(format!(
                            "{doc}:{n}: `{target}`: {} has no heading #{anchor}",
                            file.display()
                        ));
                    }
                }
            }
            for span in code_spans(line) {
                let path = span.trim_end_matches('/');
                let named = REPO_FOLDERS.iter().any(|f| span.starts_with(f));
                let literal = !span.contains(|c: char| c.is_whitespace() || "*<>{}…".contains(c));
                if named && literal && !Path::new(ROOT).join(path).exists() {
                    problems.push(format!("{doc}:{n}: `{span}` does not exist"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn the_docs_point_nowhere_outside_the_repository() {
    // Paths on the machines the project is built on, and documents the repository does not hold.
    const FORBIDDEN: &[&str] = &[
        "../shared",
        "shared/fixtures",
        "/work/",
        "SPEC.md",
        "THREATS.md",
    ];
    const FORBIDDEN_WORDS: &[&str] = &["SPEC", "THREATS"];
    let mut problems = Vec::new();
    for (doc, text) in documents() {
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            for bad in FORBIDDEN {
                if line.contains(bad) {
                    problems.push(format!("{doc}:{n}: names `{bad}`, outside the repository"));
                }
            }
            let words = line.split(|c: char| !c.is_alphanumeric() && c != '_');
            for word in words.filter(|w| FORBIDDEN_WORDS.contains(w)) {
                problems.push(format!(
                    "{doc}:{n}: names {word}, a document outside the repository"
                ));
            }
            // "issue 14", "Issue #3": an issue tracker's number means nothing to a reader here.
            let lower = line.to_lowercase();
            for (at, _) in lower.match_indices("issue") {
                let after = lower[at + "issue".len()..].trim_start_matches([' ', '#']);
                if after.starts_with(|c: char| c.is_ascii_digit()) {
                    problems.push(format!("{doc}:{n}: names an issue number"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}
