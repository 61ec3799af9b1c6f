//! Small rooms: no production file over 500 lines and no function over 120, in any of Klaxon's
//! crates, unless a line at its top says why ("Long by design: …"). Tests (`tests.rs`, code after
//! a `#[cfg(test)]` module) and the benchmarks (`bench/`) are not counted. Read from the sources
//! as text: a function runs from its `fn` line to the first line that closes it at its indent.

use std::path::{Path, PathBuf};

const MAX_FILE: usize = 500;
const MAX_FN: usize = 120;
const WHY: &str = "Long by design";

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "bench") {
                sources(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs")
            && path.file_name().is_some_and(|n| n != "tests.rs")
        {
            out.push(path);
        }
    }
}

/// The lines before the file's test module.
fn production(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .windows(2)
        .position(|w| w[0].trim() == "#[cfg(test)]" && w[1].trim_start().starts_with("mod "))
        .unwrap_or(lines.len());
    lines[..end].to_vec()
}

/// (name, first line, length) of every function longer than `MAX_FN` lines.
fn long_functions(lines: &[&str]) -> Vec<(String, usize, usize)> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let indent = line.len() - line.trim_start().len();
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(at) = words.iter().position(|w| *w == "fn") else {
            i += 1;
            continue;
        };
        let before_fn = &words[..at];
        let a_definition = before_fn.iter().all(|w| {
            ["pub", "async", "const", "unsafe", "extern"].contains(w) || w.starts_with("pub(")
        });
        if !a_definition || line.trim_end().ends_with(';') {
            i += 1;
            continue;
        }
        let name = words
            .get(at + 1)
            .map_or("", |w| w.split(['(', '<']).next().unwrap_or(""));
        let closes = |l: &str| {
            l.len() > indent && l[..indent].trim().is_empty() && l[indent..].starts_with('}')
        };
        let end = (i + 1..lines.len())
            .find(|&j| closes(lines[j]))
            .unwrap_or(i);
        let length = end - i + 1;
        let said = lines[i..=end.min(i + 12)].iter().any(|l| l.contains(WHY));
        if length > MAX_FN && !said {
            found.push((name.to_string(), i + 1, length));
        }
        i = end.max(i) + 1;
    }
    found
}

#[test]
fn a_long_function_is_found_and_one_that_says_why_is_not() {
    let body = |why: &str| {
        let mut text = format!("pub async fn big(\n    x: u8,\n) -> u8 {{\n{why}");
        text.push_str(&"    x;\n".repeat(MAX_FN));
        text.push_str("}\nfn small() {}\n");
        text
    };
    let plain = body("");
    assert_eq!(
        long_functions(&plain.lines().collect::<Vec<_>>()),
        vec![("big".to_string(), 1, MAX_FN + 4)]
    );
    let said = body("    // Long by design: one arm per case.\n");
    assert!(long_functions(&said.lines().collect::<Vec<_>>()).is_empty());
}

#[test]
fn no_production_file_or_function_is_over_its_size() {
    let mut over = Vec::new();
    for krate in ["domain", "core", "app", "server", "operator", "frontend"] {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let root = workspace.join(krate).join("src");
        let mut files = Vec::new();
        sources(&root, &mut files);
        assert!(!files.is_empty(), "{krate} is read");
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let lines = production(&text);
            let rel = file.strip_prefix(workspace).unwrap_or(&file);
            let said = lines.iter().take(12).any(|l| l.contains(WHY));
            if lines.len() > MAX_FILE && !said {
                over.push(format!("{}: {} lines", rel.display(), lines.len()));
            }
            for (name, at, length) in long_functions(&lines) {
                over.push(format!("{}:{at}: fn {name}, {length} lines", rel.display()));
            }
        }
    }
    assert!(
        over.is_empty(),
        "over {MAX_FILE} lines a file or {MAX_FN} a function, with no line saying why:\n{}",
        over.join("\n")
    );
}
