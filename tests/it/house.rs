//! The house's rules, checked over the sources (issue 44): no source file is over 1,000 lines
//! (the crates', and the tests', benches', examples', fuzz targets' and Python package's), and
//! no two files import each other, a module file and its own children included (a parent
//! holds declarations, re-exports and what uses its children; what they share lives in a
//! child of its own). A crate's root (`lib.rs`, `main.rs`) is not counted. A pair is found
//! from each file's paths (`crate::`, `super::`, `self::`, brace groups of `use`, and a
//! module file's children by name; comments and test modules left out). The pairs left are
//! listed in `KNOWN`, to be emptied: a new one fails the test, and so does a listed one that
//! is gone (take it off the list).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The source trees, each a crate's module root.
const CRATES: &[&str] = &[
    "crates/hfkit-format/src",
    "crates/hfkit-read/src",
    "crates/hfkit-storage/src",
    "crates/hfkit-table/src",
    "crates/hfkit-hbase/src",
    "crates/hfkit-pipeline/src",
    "src",
    "python/src",
];

/// Pairs of files that still import each other (crate root, then the two module paths).
const KNOWN: &[(&str, &str, &str)] = &[];

/// Every `.rs` file under `dir` by its module path (`a/b` for `a/b.rs` and `a/b/mod.rs`).
fn modules(dir: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut out = BTreeMap::new();
    for f in crate::common::files_under(dir) {
        if f.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = f.strip_prefix(dir).unwrap().with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if matches!(
            parts.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            parts.pop();
        }
        out.insert(parts, f);
    }
    out
}

/// The code of a file without comments and without its test module.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => &text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths a file's code names that start with `crate`, `super` or `self` (brace groups of
/// `use` expanded one level), as segment lists.
fn named_paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < bytes.len() {
        // Paths start with an ASCII `c` or `s`: slicing there keeps to char boundaries.
        if !matches!(bytes[i], b'c' | b's') {
            i += 1;
            continue;
        }
        let at_start = i == 0 || !word(bytes[i - 1]);
        let rest = &code[i..];
        let head = ["crate::", "super::", "self::"]
            .iter()
            .find(|h| at_start && rest.starts_with(**h));
        let Some(_) = head else {
            i += 1;
            continue;
        };
        // The path: words joined by `::`, maybe ending in a brace group.
        let mut segs = Vec::new();
        let mut j = i;
        loop {
            let start = j;
            while j < bytes.len() && word(bytes[j]) {
                j += 1;
            }
            if j > start {
                segs.push(code[start..j].to_string());
            }
            if code[j..].starts_with("::{") {
                let end = code[j..].find('}').map_or(bytes.len(), |e| j + e);
                for item in code[j + 3..end].split(',') {
                    let first = item.trim().split("::").next().unwrap_or("").trim();
                    if !first.is_empty() && first.bytes().all(word) {
                        let mut p = segs.clone();
                        p.push(first.to_string());
                        out.push(p);
                    }
                }
                j = end;
                break;
            }
            if code[j..].starts_with("::") {
                j += 2;
                continue;
            }
            break;
        }
        out.push(segs);
        i = j.max(i + 1);
    }
    out
}

/// The other files of the crate a file names.
fn imports(
    path: &[String],
    file: &Path,
    files: &BTreeMap<Vec<String>, PathBuf>,
) -> BTreeSet<Vec<String>> {
    let code = code(file);
    let mut found = BTreeSet::new();
    let is_mod_file = matches!(
        file.file_stem().and_then(|s| s.to_str()),
        Some("mod" | "lib" | "main")
    );
    for segs in named_paths(&code) {
        let mut full: Vec<String> = path.to_vec();
        let mut rest = segs.as_slice();
        match rest.first().map(String::as_str) {
            Some("crate") => {
                full.clear();
                rest = &rest[1..];
            }
            _ => {
                while let Some(s) = rest.first() {
                    match s.as_str() {
                        "super" => {
                            full.pop();
                        }
                        "self" => {}
                        _ => break,
                    }
                    rest = &rest[1..];
                }
            }
        }
        full.extend(rest.iter().cloned());
        for k in (1..=full.len()).rev() {
            if files.contains_key(&full[..k]) && full[..k] != *path {
                found.insert(full[..k].to_vec());
                break;
            }
        }
    }
    if is_mod_file {
        // A module file's children by name (`child::x`, `use child::...`).
        for (m, _) in files.iter() {
            if m.len() == path.len() + 1 && m.starts_with(path) {
                let name = m.last().unwrap();
                if code.contains(&format!("{name}::")) {
                    found.insert(m.clone());
                }
            }
        }
    }
    found
}

#[test]
fn no_source_file_is_over_1000_lines_and_no_two_files_import_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut long = Vec::new();
    let mut pairs = BTreeSet::new();
    for krate in CRATES {
        let files = modules(&root.join(krate));
        assert!(!files.is_empty(), "{krate}: no sources");
        let mut names = BTreeMap::new();
        for (path, file) in &files {
            let lines = std::fs::read_to_string(file).unwrap().lines().count();
            if lines > 1000 {
                long.push(format!("{} ({lines} lines)", file.display()));
            }
            names.insert(path.clone(), imports(path, file, &files));
        }
        for (a, bs) in &names {
            for b in bs {
                if a < b && names.get(b).is_some_and(|x| x.contains(a)) {
                    pairs.insert((krate.to_string(), a.join("/"), b.join("/")));
                }
            }
        }
    }
    // Tests, benches, examples, fuzz targets and the Python package too.
    for dir in [
        "tests",
        "benches",
        "examples",
        "fuzz",
        "crates",
        "python/hfkit",
        "python/tests",
    ] {
        for file in crate::common::files_under(&root.join(dir)) {
            let source = file
                .extension()
                .is_some_and(|e| e == "rs" || e == "py" || e == "sh");
            let built = file
                .components()
                .any(|c| matches!(c.as_os_str().to_str(), Some("target" | ".venv")));
            if !source || built || CRATES.iter().any(|k| file.starts_with(root.join(k))) {
                continue;
            }
            let lines = std::fs::read_to_string(&file).unwrap().lines().count();
            if lines > 1000 {
                long.push(format!("{} ({lines} lines)", file.display()));
            }
        }
    }
    assert!(long.is_empty(), "files over 1,000 lines: {long:?}");
    let known: BTreeSet<(String, String, String)> = KNOWN
        .iter()
        .map(|(k, a, b)| (k.to_string(), a.to_string(), b.to_string()))
        .collect();
    let new: Vec<_> = pairs.difference(&known).collect();
    let gone: Vec<_> = known.difference(&pairs).collect();
    assert!(new.is_empty(), "files that import each other: {new:?}");
    assert!(
        gone.is_empty(),
        "no longer import each other (take them off KNOWN): {gone:?}"
    );
}
