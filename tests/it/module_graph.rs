//! The library's top-level modules import each other without a cycle (the map in `lib.rs`
//! depends on it: data moves one way). Read from the source: every `crate::a…` path and every
//! `crate::{a…, b…}` group outside `#[cfg(test)]` code and comments is an edge from the file's
//! top-level module to `a` (and `b`); a cycle is a path that comes back to where it started.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Graph = BTreeMap<String, BTreeSet<String>>;

fn top_level_module(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next().unwrap().as_os_str();
    first.to_string_lossy().trim_end_matches(".rs").to_owned()
}

/// The code of a file without comments and without its `#[cfg(test)]` tail.
fn code(text: &str) -> String {
    let text = text.split("\n#[cfg(test)]").next().unwrap_or_default();
    text.lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Top-level module names that `code` reaches through `crate::`.
fn targets(code: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = code[at + "crate::".len()..].trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            let body = &group[..group.find('}').unwrap_or(group.len())];
            for item in body.split(',') {
                let name = ident(item.trim());
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

fn graph(src: &Path) -> Graph {
    let mut graph = Graph::new();
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
            let from = top_level_module(src, &path);
            let text = std::fs::read_to_string(&path).unwrap();
            let edges = graph.entry(from.clone()).or_default();
            edges.extend(targets(&code(&text)).into_iter().filter(|to| *to != from));
        }
    }
    graph
}

/// A cycle through `start`, if there is one, as the modules on it.
fn cycle_from(graph: &Graph, start: &str) -> Option<Vec<String>> {
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

#[test]
fn the_top_level_modules_import_each_other_without_a_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = graph(&src);
    assert!(graph.len() >= 10, "the walk found the modules: {graph:?}");
    assert!(
        graph["state"].contains("cache") && graph["http"].contains("state"),
        "the reader sees the edges it should: {graph:?}"
    );
    for module in graph.keys() {
        if let Some(cycle) = cycle_from(&graph, module) {
            panic!("import cycle: {}", cycle.join(" -> "));
        }
    }
}

#[test]
fn the_reader_finds_paths_and_groups_and_skips_comments_and_tests() {
    let text = "use crate::{auth::Keys, quota};\nlet x = crate::cache::Entry; // crate::demo\n\
                #[cfg(test)]\nmod tests { use crate::http; }";
    let found = targets(&code(text));
    assert_eq!(
        found.into_iter().collect::<Vec<_>>(),
        ["auth", "cache", "quota"]
    );
    let mut cyclic = Graph::new();
    cyclic.entry("a".into()).or_default().insert("b".into());
    cyclic.entry("b".into()).or_default().insert("a".into());
    assert_eq!(cycle_from(&cyclic, "a").unwrap(), ["a", "b", "a"]);
}
