//! The examples in `formats/` parse and mean what the prose says.

use hfkit::pipeline::RowkeySpec;
use hfkit::table::TableSchema;

/// The examples in `formats/schema.md` parse (the rowkey spec too), and describe the same
/// table in both forms.
#[test]
fn schema_md_examples_parse() {
    let doc = include_str!("../../formats/schema.md");
    let block = |lang: &str, nth: usize| -> String {
        let fence = format!("```{lang}\n");
        let start = doc.match_indices(&fence).nth(nth).unwrap().0 + fence.len();
        doc[start..start + doc[start..].find("```").unwrap()].to_string()
    };
    let t = TableSchema::from_toml_str(&block("toml", 0), "schema.md", None).unwrap();
    let spec = t.mapping.rowkey.as_deref().unwrap();
    RowkeySpec::parse(spec).unwrap();
    let s = TableSchema::from_shell(&block("ruby", 0)).unwrap();
    assert_eq!(s.table, t.table);
    assert_eq!(t.table.splits.regions(None).unwrap().len(), 4);
    for line in block("ruby", 1).lines() {
        TableSchema::from_shell(line).unwrap_or_else(|e| panic!("{line}: {e}"));
    }
}

/// The section sign that starts a reference, and it with the quote of a quoted heading.
const SECTION: char = '\u{a7}';
const SECTION_QUOTE: &str = "\u{a7}\"";

/// The headings of every page in `formats/` and of the README, by file name: a heading is
/// named by its whole text or by its part before ` — ` (`## Compaction — \`table::compact\``
/// is named "Compaction").
fn headings(root: &std::path::Path) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut pages: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("formats"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    pages.push(root.join("README.md"));
    let mut out = std::collections::BTreeMap::new();
    for p in pages {
        let text = std::fs::read_to_string(&p).unwrap();
        let mut names = Vec::new();
        for line in text.lines() {
            let Some(h) = line.trim_start_matches('#').strip_prefix(' ') else {
                continue;
            };
            if !line.starts_with('#') {
                continue;
            }
            let h = h.trim();
            names.push(h.to_string());
            if let Some((short, _)) = h.split_once(" — ") {
                names.push(short.to_string());
            }
        }
        out.insert(p.file_name().unwrap().to_string_lossy().into_owned(), names);
    }
    out
}

/// Every `.rs` and `.md` file of the repository's sources, tests, benches and specs.
fn source_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "target") {
                source_files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs" || x == "md") {
            out.push(p);
        }
    }
}

/// The `X.md` names in `text`, with the byte offset just past each.
fn page_mentions(text: &str) -> Vec<(String, usize)> {
    let name_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    text.match_indices(".md")
        .filter_map(|(at, _)| {
            let start = text[..at]
                .char_indices()
                .rev()
                .take_while(|&(_, c)| name_char(c))
                .last()?
                .0;
            Some((text[start..at + 3].to_string(), at + 3))
        })
        .collect()
}

/// Whether `gap`, the text between a page's name and a section sign, only joins them: spaces,
/// quotes and brackets, a link target, comment markers, "and"/"or", commas and other quoted
/// section references.
fn only_joins(gap: &str) -> bool {
    let mut rest = gap;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix(SECTION_QUOTE) {
            let Some(end) = r.find('"') else {
                return false;
            };
            rest = &r[end + 1..];
        } else if let Some(r) = rest.strip_prefix("](") {
            let Some(end) = r.find(')') else {
                return false;
            };
            rest = &r[end + 1..];
        } else if let Some(r) = ["//!", "///", "//", "and ", "or "]
            .iter()
            .find_map(|p| rest.strip_prefix(p))
        {
            rest = r;
        } else if rest.starts_with(|c: char| c.is_whitespace() || "`()[],;:".contains(c)) {
            rest = &rest[1..];
        } else {
            return false;
        }
    }
    true
}

/// A heading quoted over several comment lines, as one line.
fn unwrap_quoted(quoted: &str) -> String {
    quoted
        .lines()
        .map(|l| {
            let l = l.trim();
            ["//!", "///", "//"]
                .iter()
                .find_map(|p| l.strip_prefix(p))
                .unwrap_or(l)
                .trim()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every reference to a section of a `formats/` page (or the README) in the sources, tests,
/// benches and `formats/` names a heading that page has. A reference is the section sign (this
/// file avoids writing it, so as not to check itself) then the heading in double quotes, after
/// the page's name (`formats/X.md`), or after another reference to the same page in the same
/// sentence ("and" another); one without a page right before it is to the page itself (in
/// `formats/`) or to the first page the file names. Without quotes the text after the sign must
/// start with a heading. Numbers after the sign are the reference material's, not checked here.
#[test]
fn section_references_name_existing_headings() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let pages = headings(root);
    let mut files = vec![root.join("README.md")];
    for dir in ["crates", "src", "tests", "benches", "formats"] {
        source_files(&root.join(dir), &mut files);
    }
    let mut checked = 0;
    let mut broken = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let rel = path.strip_prefix(root).unwrap().display().to_string();
        let mentions: Vec<(String, usize)> = page_mentions(&text)
            .into_iter()
            .filter(|(name, _)| pages.contains_key(name))
            .collect();
        let own = path.file_name().unwrap().to_string_lossy().into_owned();
        let home = if rel.starts_with("formats") || rel == "README.md" {
            Some(own)
        } else {
            mentions.first().map(|(name, _)| name.clone())
        };
        for (at, _) in text.match_indices(SECTION) {
            let after = &text[at + SECTION.len_utf8()..];
            if after.starts_with(|c: char| c.is_ascii_digit()) {
                continue;
            }
            let line = text[..at].matches('\n').count() + 1;
            let named = mentions
                .iter()
                .rev()
                .find(|(_, end)| *end <= at)
                .filter(|(_, end)| at - end < 300 && only_joins(&text[*end..at]))
                .map(|(name, _)| name.clone());
            let Some(page) = named.or_else(|| home.clone()) else {
                broken.push(format!(
                    "{rel}:{line}: no formats/ page named for this reference"
                ));
                continue;
            };
            let heads = &pages[&page];
            checked += 1;
            match after.strip_prefix('"') {
                Some(q) => {
                    let quoted = unwrap_quoted(&q[..q.find('"').unwrap_or(q.len())]);
                    if !heads.contains(&quoted) {
                        broken.push(format!("{rel}:{line}: {page} has no heading \"{quoted}\""));
                    }
                }
                None => {
                    let starts_a_heading = heads.iter().any(|h| {
                        after.starts_with(h.as_str())
                            && !after[h.len()..].starts_with(|c: char| c.is_alphanumeric())
                    });
                    if !starts_a_heading {
                        let cut: String = after.chars().take(30).collect();
                        broken.push(format!("{rel}:{line}: {page} has no heading at {cut:?}"));
                    }
                }
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} references found: is the scan right?"
    );
    assert!(
        broken.is_empty(),
        "section references without their heading:\n{}",
        broken.join("\n")
    );
}

/// The `[operation]` and `ttl` examples of `formats/schema.md` parse, appended to a table with
/// the families they name.
#[test]
fn schema_md_change_and_ttl_examples_parse() {
    let doc = include_str!("../../formats/schema.md");
    let blocks: Vec<&str> = doc
        .split("```toml\n")
        .skip(1)
        .map(|b| &b[..b.find("```").unwrap()])
        .collect();
    let table = "[table]\nname = \"t\"\n[[family]]\nname = \"d\"\n[[family]]\nname = \"m\"\n\
                 [[family]]\nname = \"s\"\n[rowkey]\nspec = \"id\"\n";
    let op = blocks.iter().find(|b| b.contains("[operation]")).unwrap();
    let ttl = blocks.iter().find(|b| b.contains("ttl = ")).unwrap();
    let text = format!("{table}{ttl}[[column]]\nsource = \"email\"\ncell = \"d:email\"\n{op}");
    let t = TableSchema::from_toml_str(&text, "schema.md", None).unwrap();
    let op = t.mapping.operation.unwrap();
    assert_eq!(op.deletes.len(), 4);
    assert!(t.mapping.columns[0].ttl.is_some());
}
