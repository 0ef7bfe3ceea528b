//! Attach options `completebulkload` users know (`formats/table.md` §"Attach"): refuse to split
//! a file that straddles regions, skip families the table lacks (counted), and a directory of
//! region directories.

use std::path::{Path, PathBuf};

use crate::common::{hfkit, import_with, text, tmpdir};

const SCHEMA: &str = "[table]\nname = \"a\"\n[[family]]\nname = \"d\"\n\
                      [rowkey]\nspec = \"id\"\n[[column]]\nsource = \"v\"\ncell = \"d:v\"\n";

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A bulk-load directory of rows `ids` (one region: the schema has no splits).
fn bulk(dir: &Path, name: &str, ids: &[&str]) -> PathBuf {
    let schema = dir.join("s.toml");
    std::fs::write(&schema, SCHEMA).unwrap();
    let input = dir.join(format!("{name}.csv"));
    let mut csv = String::from("id,v\n");
    for id in ids {
        csv.push_str(&format!("{id},v{id}\n"));
    }
    std::fs::write(&input, csv).unwrap();
    let out = dir.join(name);
    let o = import_with(&schema, &input, "--out", &out, &["--quiet"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    out
}

/// A table `a` with one family `d` split at `m`.
fn table(dir: &Path) -> PathBuf {
    let t = dir.join("t");
    let o = hfkit(&[
        "table",
        "create",
        p(&t),
        "--hbase-shell",
        "create 'a', 'd', SPLITS => ['m']",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    t
}

fn manifest_version(t: &Path) -> String {
    std::fs::read_to_string(t.join("CURRENT")).unwrap()
}

fn scan_rows(t: &Path) -> Vec<String> {
    let o = hfkit(&["scan", p(t), "--format", "tsv"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    text(&o.stdout)
        .lines()
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect()
}

#[test]
fn no_split_refuses_a_straddling_file_and_attaches_nothing() {
    let tmp = tmpdir();
    let t = table(tmp.path());
    let straddling = bulk(tmp.path(), "b", &["c", "x"]);
    let before = manifest_version(&t);
    let o = hfkit(&["attach", p(&t), p(&straddling), "--no-split"]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains("its rows ('c' to 'x') straddle a region boundary of the table, and --no-split refuses to split it: nothing attached"),
        "{err}"
    );
    assert_eq!(manifest_version(&t), before);
    assert!(scan_rows(&t).is_empty());
    // A file within one region attaches with --no-split; the straddling one without it is split.
    let within = bulk(tmp.path(), "w", &["n", "o"]);
    let o = hfkit(&["attach", p(&t), p(&within), "--no-split", "--json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = hfkit(&["attach", p(&t), p(&straddling), "--json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["split_inputs"], 1);
    assert_eq!(scan_rows(&t), ["c", "n", "o", "x"]);
}

#[test]
fn families_the_table_lacks_are_refused_or_ignored_with_a_count() {
    let tmp = tmpdir();
    let t = table(tmp.path());
    let b = bulk(tmp.path(), "b", &["a", "b"]);
    let extra = b.join("x");
    std::fs::create_dir(&extra).unwrap();
    std::fs::write(extra.join("f1"), b"not read").unwrap();
    std::fs::write(extra.join("f2"), b"not read").unwrap();
    let o = hfkit(&["attach", p(&t), p(&b)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("families not in table a: x"),
        "{}",
        text(&o.stderr)
    );
    assert!(scan_rows(&t).is_empty());
    let o = hfkit(&["attach", p(&t), p(&b), "--ignore-unknown-families"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains(&format!(
            "ignored {}: not a family of the table (2 files)",
            extra.display()
        )),
        "{}",
        text(&o.stdout)
    );
    assert_eq!(scan_rows(&t), ["a", "b"]);
}

#[test]
fn a_directory_of_region_directories() {
    let tmp = tmpdir();
    let t = table(tmp.path());
    let root = tmp.path().join("regions");
    std::fs::create_dir(&root).unwrap();
    for (name, ids) in [("r1", &["b", "c"][..]), ("r2", &["p", "q"][..])] {
        let b = bulk(tmp.path(), name, ids);
        std::fs::rename(&b, root.join(name)).unwrap();
    }
    // Without --region-dirs, r1 and r2 would be families.
    let o = hfkit(&["attach", p(&t), p(&root)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("families not in table a: r1, r2")
            || text(&o.stderr).contains("families not in table a: r2, r1")
    );
    let o = hfkit(&["attach", p(&t), p(&root), "--region-dirs", "--json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["files"], 2);
    assert_eq!(r["version"], 1, "one commit for every region directory");
    assert_eq!(scan_rows(&t), ["b", "c", "p", "q"]);
}

/// `import --exclude-from-minor-compaction` writes HBase's EXCLUDE_FROM_MINOR_COMPACTION
/// FileInfo flag on every file; without it the flag is false.
#[test]
fn import_flags_files_excluded_from_minor_compaction() {
    let tmp = tmpdir();
    let schema = tmp.path().join("s.toml");
    std::fs::write(&schema, SCHEMA).unwrap();
    let input = tmp.path().join("in.csv");
    std::fs::write(&input, "id,v\nrow-000001,a\nrow-000002,b\n").unwrap();
    for (flag, want) in [(true, "true"), (false, "false")] {
        let out = tmp.path().join(format!("out-{flag}"));
        let extra: &[&str] = if flag {
            &["--quiet", "--exclude-from-minor-compaction"]
        } else {
            &["--quiet"]
        };
        let o = import_with(&schema, &input, "--out", &out, extra);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let files: Vec<PathBuf> = std::fs::read_dir(out.join("d"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(files.len(), 1);
        let o = hfkit(&["hfile", "info", p(&files[0])]);
        let info = text(&o.stdout);
        assert!(
            info.contains(&format!("file_info.EXCLUDE_FROM_MINOR_COMPACTION: {want}")),
            "{info}"
        );
    }
}

/// At most 32 files per region and family in one attach (HBase's
/// `hbase.mapreduce.bulkload.max.hfiles.perRegion.perFamily`), through the CLI and the
/// library; `AttachOptions::max_files_per_region_family` raises it, still one commit.
#[test]
fn more_files_per_region_and_family_than_the_limit_attach_nothing_unless_raised() {
    use hfkit::table::directory::{AttachOptions, Table};
    let tmp = tmpdir();
    let t = table(tmp.path());
    let one = bulk(tmp.path(), "one", &["a"]);
    let file = std::fs::read_dir(one.join("d"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let many = tmp.path().join("many");
    std::fs::create_dir_all(many.join("d")).unwrap();
    for i in 0..33 {
        std::fs::copy(&file, many.join("d").join(format!("f{i:02}"))).unwrap();
    }
    let before = manifest_version(&t);
    let o = hfkit(&["attach", p(&t), p(&many)]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains("more than 32 files for region"), "{err}");
    assert!(
        err.contains("hbase.mapreduce.bulkload.max.hfiles.perRegion.perFamily"),
        "{err}"
    );
    assert_eq!(manifest_version(&t), before);
    let o = hfkit(&[
        "attach",
        p(&t),
        p(&one),
        "--max-files-per-region-family",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert_eq!(manifest_version(&t), before);
    let table = Table::open(&t).unwrap();
    let mut opts = AttachOptions {
        max_files_per_region_family: Some(2),
        ..AttachOptions::default()
    };
    let refused = table.attach_import_all(&[one.as_path(), many.as_path()], &opts, None);
    assert!(refused.is_err());
    assert_eq!(manifest_version(&t), before);
    opts.max_files_per_region_family = Some(33);
    let r = table
        .attach_import_all(&[many.as_path()], &opts, None)
        .unwrap();
    assert_eq!(r.files.len(), 33);
    assert_eq!(scan_rows(&t), ["a"]);
    // Raised on the command line as an HBase user raises the setting.
    let o = hfkit(&[
        "attach",
        p(&t),
        p(&many),
        "--max-files-per-region-family",
        "33",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}
