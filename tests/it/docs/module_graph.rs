//! The library's modules import each other without a cycle, at every depth: among the
//! top-level modules, and among the submodules of each folder (the map in `lib.rs` depends on
//! it: data moves one way). The workspace's `stand-in` crate is held to the same.
//!
//! Read from the source. Every `crate::…`, `super::…` and `self::…` path (groups `{a, b::c}`
//! expanded, nested ones too) outside comments and `#[cfg(test)]` items is resolved to the
//! deepest module it names. An edge from module `a::x::…` to module `a::y::…` is an edge
//! `x → y` among the children of `a`; an edge between a module and its own ancestor (a child
//! using its parent's types, a parent re-exporting its child) is how a folder is put together,
//! not a dependency, and is left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module path, from the crate root: `["fleet", "entry"]`.
type Module = Vec<String>;
/// For each parent module, the edges among its children: `parent → (child → children)`.
type Levels = BTreeMap<Module, BTreeMap<String, BTreeSet<String>>>;

/// The module a source file is: `fleet/mod.rs` and `fleet.rs` are `fleet`.
fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Module = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" {
        parts.push(stem.to_owned());
    }
    parts
}

/// The code of a file without comments and without its `#[cfg(test)]` items (a `mod x;`
/// line, or an item with its braced body).
fn code(text: &str) -> String {
    let text: String = text
        .lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        rest = &rest[at + "#[cfg(test)]".len()..];
        let semi = rest.find(';').unwrap_or(rest.len());
        let brace = rest.find('{').unwrap_or(rest.len());
        if semi < brace {
            rest = &rest[(semi + 1).min(rest.len())..];
            continue;
        }
        let mut depth = 0usize;
        let mut end = rest.len();
        for (i, c) in rest.char_indices().skip(brace) {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The paths a use tree or an inline path starting at `text` names, groups expanded:
/// `a::{b, c::{d, e}}` gives `a::b`, `a::c::d`, `a::c::e`.
fn expand(text: &str) -> Vec<Vec<String>> {
    fn ident(s: &str) -> &str {
        let end = s
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        &s[..end]
    }
    /// The paths of the tree at `s`, and how much of `s` it took.
    fn tree(s: &str) -> (Vec<Vec<String>>, usize) {
        let mut prefix = Vec::new();
        let mut at = 0;
        loop {
            let rest = s[at..].trim_start();
            at = s.len() - rest.len();
            if rest.starts_with('{') {
                at += 1;
                let mut paths = Vec::new();
                loop {
                    let inner = s[at..].trim_start();
                    at = s.len() - inner.len();
                    if inner.starts_with('}') || inner.is_empty() {
                        at += usize::from(!inner.is_empty());
                        break;
                    }
                    let (sub, took) = tree(&s[at..]);
                    at += took;
                    for path in sub {
                        paths.push([prefix.clone(), path].concat());
                    }
                    let after = s[at..].trim_start();
                    at = s.len() - after.len();
                    if after.starts_with(',') {
                        at += 1;
                    }
                }
                return (paths, at);
            }
            let name = ident(rest);
            if name.is_empty() {
                return (vec![prefix], at);
            }
            prefix.push(name.to_owned());
            at += name.len();
            match s[at..].strip_prefix("::") {
                Some(_) => at += 2,
                None => return (vec![prefix], at),
            }
        }
    }
    tree(text).0
}

/// The modules `file_module`'s code names through `crate::`, `super::` and `self::` paths,
/// each resolved to the deepest known module on its path.
fn targets(code: &str, file_module: &Module, modules: &BTreeSet<Module>) -> BTreeSet<Module> {
    let mut out = BTreeSet::new();
    let bytes = code.as_bytes();
    for start in ["crate::", "super::", "self::"] {
        for (at, _) in code.match_indices(start) {
            let before = at.checked_sub(1).map(|i| bytes[i]);
            if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':') {
                continue; // `foo::super::` or a longer name ending in `self`: not a root
            }
            for path in expand(&code[at..]) {
                let mut segments = path.into_iter().peekable();
                let mut base: Module = match segments.next().as_deref() {
                    Some("crate") => Vec::new(),
                    Some("self") => file_module.clone(),
                    Some("super") => file_module[..file_module.len().saturating_sub(1)].to_vec(),
                    _ => continue,
                };
                while segments.peek().is_some_and(|s| s == "super") {
                    segments.next();
                    base.pop();
                }
                for segment in segments {
                    let mut deeper = base.clone();
                    deeper.push(segment);
                    if !modules.contains(&deeper) {
                        break;
                    }
                    base = deeper;
                }
                if !base.is_empty() {
                    out.insert(base);
                }
            }
        }
    }
    out
}

/// Every module file under `src` and its code (the crate roots excluded: they declare the
/// modules and re-export from them).
fn sources(src: &Path) -> Vec<(Module, String)> {
    let mut out = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let is_crate_root = path.parent() == Some(src)
                && matches!(
                    path.file_name().and_then(|n| n.to_str()),
                    Some("lib.rs" | "main.rs")
                );
            if path.extension().is_none_or(|e| e != "rs") || is_crate_root {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            out.push((module_of(src, &path), code(&text)));
        }
    }
    out
}

/// The edges among the children of every module, from every file's paths.
fn levels(files: &[(Module, String)]) -> Levels {
    let modules: BTreeSet<Module> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut levels = Levels::new();
    for (from, code) in files {
        for to in targets(code, from, &modules) {
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            // An ancestor or a descendant: how a folder is put together, not a dependency.
            if common == from.len() || common == to.len() {
                continue;
            }
            levels
                .entry(from[..common].to_vec())
                .or_default()
                .entry(from[common].clone())
                .or_default()
                .insert(to[common].clone());
        }
    }
    levels
}

/// A cycle through `start` among one level's edges, if there is one, as the modules on it.
fn cycle_from(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_owned(), vec![start.to_owned()])];
    let mut seen = BTreeSet::new();
    while let Some((at, path)) = stack.pop() {
        for next in graph.get(&at).into_iter().flatten() {
            if next == start {
                return Some([path.clone(), vec![start.to_owned()]].concat());
            }
            if seen.insert(next.clone()) {
                stack.push((next.clone(), [path.clone(), vec![next.clone()]].concat()));
            }
        }
    }
    None
}

/// Every cycle found, each named by its parent module and the children on it.
fn cycles(levels: &Levels) -> Vec<String> {
    let mut found = Vec::new();
    for (parent, graph) in levels {
        for module in graph.keys() {
            if let Some(cycle) = cycle_from(graph, module) {
                let at = if parent.is_empty() {
                    "crate".to_owned()
                } else {
                    format!("crate::{}", parent.join("::"))
                };
                found.push(format!("in {at}: {}", cycle.join(" -> ")));
            }
        }
    }
    found
}

/// The edges of every level of the crate whose sources are in `src` (from the repository root).
fn crate_levels(src: &str) -> Levels {
    levels(&sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join(src)))
}

fn assert_no_cycle(levels: &Levels) {
    let cycles = cycles(levels);
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

/// Asserts that the reader sees each `(module, imported)` of `edges` in the folder `folder`
/// (the crate's top level when empty) of `levels`: it reads what it should.
fn assert_sees(levels: &Levels, folder: &[&str], edges: &[(&str, &str)]) {
    let module: Module = folder.iter().map(|m| (*m).to_owned()).collect();
    let graph = &levels[&module];
    for (from, to) in edges {
        assert!(
            graph[*from].contains(*to),
            "the reader does not see {from} → {to} in {folder:?}: {graph:?}"
        );
    }
}

#[test]
fn the_modules_import_each_other_without_a_cycle_at_any_depth() {
    let levels = crate_levels("src");
    let top = &levels[&Vec::new()];
    assert!(top.len() >= 10, "the walk found the modules: {top:?}");
    let edges = [("lookup", "cache"), ("state", "lookup"), ("http", "state")];
    assert_sees(&levels, &[], &edges);
    // Submodule edges, through `super::`.
    assert_sees(
        &levels,
        &["fleet"],
        &[("entries", "entry"), ("entries", "flight")],
    );
    assert_no_cycle(&levels);
}

/// The same holds for the workspace's `stand-in` crate (the platforms' stand-ins).
#[test]
fn the_stand_in_crates_modules_import_each_other_without_a_cycle() {
    let levels = crate_levels("stand-in/src");
    let edges = [("embed", "json"), ("pages", "state")];
    assert_sees(&levels, &["short_video"], &edges);
    assert_no_cycle(&levels);
}

#[test]
fn the_reader_expands_groups_resolves_super_and_skips_comments_and_tests() {
    let modules: BTreeSet<Module> = [
        "auth",
        "cache",
        "quota",
        "fleet",
        "fleet::entry",
        "fleet::flight",
        "fleet::answers",
    ]
    .iter()
    .map(|m| m.split("::").map(str::to_owned).collect())
    .collect();
    let text = "use crate::{auth::Keys, quota::{Lease, self}};\n\
                use super::{entry::{A, B}, Fleet};\n\
                let x = crate::cache::Entry; // crate::demo\n\
                #[cfg(test)]\nmod helpers;\n\
                fn after() { super::flight::go() }\n\
                #[cfg(test)]\nmod tests { use crate::http; }";
    let here: Module = vec!["fleet".into(), "answers".into()];
    let found: Vec<String> = targets(&code(text), &here, &modules)
        .into_iter()
        .map(|m| m.join("::"))
        .collect();
    assert_eq!(
        found,
        [
            "auth",
            "cache",
            "fleet",
            "fleet::entry",
            "fleet::flight",
            "quota"
        ]
    );
}

#[test]
fn a_cycle_between_two_files_of_one_folder_is_found() {
    // The shape this test was written for: two files of one folder that import each other
    // through `super::` (the fleet's entry and flight once did), invisible at the top level.
    let files = vec![
        (
            vec!["fleet".to_owned(), "cache".to_owned()],
            "use super::flight::FlightToken;".to_owned(),
        ),
        (
            vec!["fleet".to_owned(), "flight".to_owned()],
            "use super::cache::{MAX_BODY_BYTES, SharedEntry};".to_owned(),
        ),
        (vec!["fleet".to_owned()], "pub use flight::Lock;".to_owned()),
    ];
    let found = cycles(&levels(&files));
    assert!(
        found
            .iter()
            .any(|c| c.starts_with("in crate::fleet: ") && c.contains("cache")),
        "{found:?}"
    );
    assert!(cycles(&levels(&files[..1])).is_empty());
}
