//! No module of `core` or `app` imports one that imports it back. Modules are taken at the top
//! level of their crate (`incidents`, not `incidents::lifecycle`), since a circle through a
//! submodule is a circle all the same. Read from the sources as text: every `crate::…` path,
//! including those inside `crate::{…}` groups, outside `#[cfg(test)]` code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The first segment of each `crate::` path in `text` (the top-level module it reaches).
fn reached(text: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        let rest = &text[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            out.extend(inner.split(',').map(|p| ident(p.trim())));
        } else {
            out.insert(ident(rest));
        }
    }
    out.retain(|m| m.chars().next().is_some_and(|c| c.is_ascii_lowercase()));
    out
}

/// Top-level module → the top-level modules it imports.
fn graph(root: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    sources(root, &mut files);
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|f| {
            let rel = f.strip_prefix(root).unwrap();
            let first = rel.components().next()?.as_os_str().to_str()?;
            Some(first.trim_end_matches(".rs").to_string())
        })
        .filter(|m| m != "lib" && m != "main")
        .collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let rel = f.strip_prefix(root).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_str()
            .unwrap();
        let from = first.trim_end_matches(".rs").to_string();
        if !modules.contains(&from) {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for to in reached(code) {
            if to != from && modules.contains(&to) {
                edges.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    edges
}

fn circles(root: &Path) -> Vec<(String, String)> {
    let edges = graph(root);
    let mut found = Vec::new();
    for (a, tos) in &edges {
        for b in tos {
            if a < b && edges.get(b).is_some_and(|back| back.contains(a)) {
                found.push((a.clone(), b.clone()));
            }
        }
    }
    found
}

#[test]
fn the_reader_sees_imports_and_groups() {
    let text = "use crate::db::{Tx, insert_json};\nuse crate::{authz, Actor};\nlet x = crate::paging::plan(1);";
    let got = reached(text);
    assert_eq!(
        got,
        ["authz", "db", "paging"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    );
}

#[test]
fn no_module_of_core_imports_one_that_imports_it_back() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    assert!(graph(&root).len() > 10, "the reader found core's modules");
    assert_eq!(circles(&root), Vec::<(String, String)>::new());
}

#[test]
fn no_module_of_app_imports_one_that_imports_it_back() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../app/src");
    assert!(graph(&root).len() > 3, "the reader found app's modules");
    assert_eq!(circles(&root), Vec::<(String, String)>::new());
}
