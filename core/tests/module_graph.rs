//! No circles between modules, in any of Klaxon's crates and at any depth: among the modules
//! of a crate, and among the submodules of any one module, no module reaches itself by
//! following imports, however long the way. A module may use its own submodules and they may
//! use it (that is one room); siblings may not lean on each other both ways. Read from the
//! sources as text: every `crate::…` and `super::…` path, through `{…}` groups at any depth,
//! outside `#[cfg(test)]` code and `tests.rs` files, taken to the deepest module (file) it names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type ModPath = Vec<String>;

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs")
            && path.file_name().is_some_and(|n| n != "tests.rs")
        {
            out.push(path);
        }
    }
}

/// The module a file holds: `a/b.rs` and `a/b/mod.rs` are `a::b`; `lib.rs` and `main.rs` the root.
fn module_of(rel: &Path) -> ModPath {
    let mut parts: ModPath = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths of one use-tree at the start of `s` (after its `crate::` or `super::`), each as
/// its segments: `a::{b, c::{d, self}}` is `a::b`, `a::c::d` and `a::c`.
fn use_tree(s: &str, prefix: &[String], out: &mut Vec<ModPath>) -> usize {
    let mut path = prefix.to_vec();
    let mut i = 0;
    let bytes = s.as_bytes();
    loop {
        while i < s.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if s[i..].starts_with('{') {
            i += 1;
            loop {
                while i < s.len() && (bytes[i].is_ascii_whitespace() || bytes[i] == b',') {
                    i += 1;
                }
                if i >= s.len() || s[i..].starts_with('}') {
                    return i + 1;
                }
                let used = use_tree(&s[i..], &path, out);
                if used == 0 {
                    return i;
                }
                i += used;
            }
        }
        let ident: String = s[i..].chars().take_while(|c| is_ident(*c)).collect();
        if ident.is_empty() {
            out.push(path);
            return i;
        }
        i += ident.len();
        if ident != "self" {
            path.push(ident);
        }
        if s[i..].starts_with("::") {
            i += 2;
        } else {
            out.push(path);
            return i;
        }
    }
}

/// Every module path named in `code`, written in `module`.
fn reached(code: &str, module: &[String]) -> Vec<ModPath> {
    let mut out = Vec::new();
    for (at, word) in code
        .match_indices("crate::")
        .chain(code.match_indices("super::"))
    {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| is_ident(c) || c == '$' || c == ':') {
            continue;
        }
        let mut base: ModPath = if word == "crate::" {
            Vec::new()
        } else {
            module.to_vec()
        };
        let mut rest = &code[at..];
        if word == "crate::" {
            rest = &rest["crate::".len()..];
        } else {
            while let Some(r) = rest.strip_prefix("super::") {
                base.pop();
                rest = r;
            }
        }
        use_tree(rest, &base, &mut out);
    }
    out
}

/// For each module, the circles among its submodules (each as the submodules' names).
fn circles(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    sources(root, &mut files);
    let modules: BTreeMap<ModPath, PathBuf> = files
        .iter()
        .map(|f| (module_of(f.strip_prefix(root).unwrap()), f.clone()))
        .collect();
    // Parent module → (child → children it reaches).
    let mut levels: BTreeMap<ModPath, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (from, file) in &modules {
        let text = std::fs::read_to_string(file).unwrap();
        // Comments name modules too (`crate::matrix` in a doc line) without importing them.
        let code: String = text
            .split("#[cfg(test)]")
            .next()
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        for path in reached(&code, from) {
            // The deepest module the path names.
            let to = (0..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|p| modules.contains_key(p))
                .unwrap_or_default();
            let shared = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if shared == from.len() || shared == to.len() {
                continue; // a module and its own submodules: one room
            }
            levels
                .entry(from[..shared].to_vec())
                .or_default()
                .entry(from[shared].clone())
                .or_default()
                .insert(to[shared].clone());
        }
    }
    let mut found = Vec::new();
    for (parent, edges) in &levels {
        for circle in strongly_connected(edges) {
            let at = if parent.is_empty() {
                "the crate".to_string()
            } else {
                parent.join("::")
            };
            found.push(format!("in {at}: {}", circle.join(" → ")));
        }
    }
    found
}

/// The groups of two or more nodes that reach one another (Tarjan's algorithm).
fn strongly_connected(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.edges.get(v).into_iter().flatten() {
            if !s.index.contains_key(w.as_str()) {
                visit(s, w);
                let lw = s.low[w.as_str()];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w.as_str()) {
                let iw = s.index[w.as_str()];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut group = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                group.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                s.found.push(group);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.found
}

#[test]
fn the_reader_follows_groups_and_super_at_any_depth() {
    let module: ModPath = vec!["paging".into(), "send".into()];
    let text = "use crate::db::{Tx, batch::{insert, self}};\nuse crate::{authz, Actor};\n\
                let x = super::super::lanes::gather(1); $crate::not::this; use super::plan;";
    let got: BTreeSet<String> = reached(text, &module)
        .into_iter()
        .map(|p| p.join("::"))
        .collect();
    let want = [
        "db::Tx",
        "db::batch::insert",
        "db::batch",
        "authz",
        "Actor",
        "lanes::gather",
        "paging::plan",
    ];
    assert_eq!(got, want.iter().map(|s| s.to_string()).collect());
}

#[test]
fn a_circle_of_any_length_is_found() {
    let edges: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a", "d"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(strongly_connected(&edges), vec![vec!["a", "b", "c"]]);
}

fn crate_src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(name)
        .join("src")
}

#[test]
fn no_module_of_any_crate_reaches_itself_through_others() {
    let mut found = Vec::new();
    for krate in ["domain", "core", "app", "server", "operator"] {
        let root = crate_src(krate);
        assert!(root.join("lib.rs").exists(), "{krate} is read");
        found.extend(circles(&root).into_iter().map(|c| format!("{krate}: {c}")));
    }
    assert!(found.is_empty(), "circles:\n{}", found.join("\n"));
}
