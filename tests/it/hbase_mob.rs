//! HBase MOB tables, offline (issue 41 item 2; formats/hbase-layout.md §"MOB tables"), against
//! `../shared/fixtures/hbase-mob` (a MOB table, its snapshot and its clone, written by HBase's
//! own MOB code, with the cells HBase's readers return): reads resolve reference cells to the
//! MOB files' cells (the table, the clone reading through the table's MOB files, the
//! snapshot), `--raw` shows them as stored and says so; the snapshot's MOB region is verified;
//! a clone into an hfkit table carries the values; a missing MOB file fails naming the
//! reference and the file; `hbase compact` refuses a MOB family by name.

use std::path::{Path, PathBuf};

use crate::common::{self, hfkit, text};

const NOW: &str = "1700086400000";

fn mob(test: &str) -> Option<PathBuf> {
    let dir = common::fixtures_root(test)?.join("hbase-mob");
    dir.join("root").is_dir().then_some(dir)
}

/// The data lines of an expected file (comments left out), without their sequence ids (the
/// read commands' cell lines have none), sorted.
fn expected_lines(p: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            l.rsplit_once(' ')
                .map_or(l, |(line, _seq)| line)
                .to_string()
        })
        .collect();
    v.sort();
    v
}

/// The cell lines `hfkit ARGS --format cells` prints, sorted; stderr.
fn cells(args: &[&str]) -> (Vec<String>, String) {
    let o = hfkit(&[args, &["--format", "cells", "--now", NOW]].concat());
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    let mut v: Vec<String> = text(&o.stdout).lines().map(String::from).collect();
    v.sort();
    (v, text(&o.stderr))
}

#[test]
fn mob_tables_snapshots_and_clones_read_their_values() {
    let Some(dir) = mob("mob_tables_snapshots_and_clones_read_their_values") else {
        return;
    };
    let root = dir.join("root");
    let r = root.to_str().unwrap();
    // Every version the families keep, references resolved: HBase's MobStoreScanner.
    for table in ["m1", "m1_clone"] {
        let want = expected_lines(&dir.join("expected").join(table).join("visible.txt"));
        assert!(!want.is_empty());
        let (got, _) = cells(&["hbase", "scan", r, table, "--versions", "3"]);
        assert!(
            got == want,
            "{table}: {} cells read, {} expected",
            got.len(),
            want.len()
        );
    }
    let (snap, _) = cells(&[
        "hbase",
        "scan",
        r,
        "--snapshot",
        "snap_m1",
        "--versions",
        "3",
    ]);
    let (m1, _) = cells(&["hbase", "scan", r, "m1", "--versions", "3"]);
    assert_eq!(snap, m1);
    // A get resolves too.
    let o = hfkit(&["hbase", "get", r, "m1", "a1", "--column", "f:b"]);
    assert!(
        text(&o.stdout).contains("value=big-1-a1.0|"),
        "{}",
        text(&o.stdout)
    );

    // --raw: the references as stored (every cell of the store files), and a note.
    let mut stored = Vec::new();
    for region in [
        "62cbcced4661153e66885bfa5b109f7d",
        "a7316a0555683f9d71e61cccfb1dbdb7",
    ] {
        for f in ["f", "g"] {
            stored.extend(expected_lines(
                &dir.join("expected/m1")
                    .join(region)
                    .join(format!("{f}.cells.txt")),
            ));
        }
    }
    stored.sort();
    let (raw, err) = cells(&["hbase", "scan", r, "m1", "--raw", "--versions", "10"]);
    assert!(
        raw == stored,
        "raw: {} cells read, {} stored",
        raw.len(),
        stored.len()
    );
    assert!(err.contains("shown as stored"), "{err}");

    // The snapshot verifies, its MOB region (four MOB files, 24 cells) included.
    let o = hfkit(&["hbase", "verify", r, "--snapshot", "snap_m1"]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}{}", text(&o.stderr));
    assert!(
        out.contains("store f34a7e55e044c79b9156ed8a7cb9f94a/f files=4 cells=24 "),
        "{out}"
    );
    let o = hfkit(&["hbase", "ls", r]);
    assert!(text(&o.stdout).contains("default:m1_clone  2 region(s)  families"));

    // A clone into an hfkit table holds the values.
    let tmp = common::tmpdir();
    let t = tmp.path().join("t");
    let t = t.to_str().unwrap();
    let o = hfkit(&["table", "clone-hbase", r, "m1_clone", t]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("4 MOB family file(s) rewritten"));
    let (cloned, _) = cells(&["scan", t, "--versions", "3"]);
    let strip = |v: &[String]| {
        v.iter()
            .map(|l| l.split(' ').take(6).collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&cloned), strip(&m1));

    // A missing MOB file: an error naming the reference and the file.
    let copy = tmp.path().join("root");
    common::copy_dir(&root, &copy);
    let gone = "d41d8cd98f00b204e9800998ecf8427e2023111415f132109e178285778d0eda5777f25b_62cbcced4661153e66885bfa5b109f7d";
    std::fs::remove_file(
        copy.join("mobdir/data/default/m1/f34a7e55e044c79b9156ed8a7cb9f94a/f")
            .join(gone),
    )
    .unwrap();
    let o = hfkit(&["hbase", "get", copy.to_str().unwrap(), "m1", "a1"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("MOB reference a1/f:b/") && err.contains(gone),
        "{err}"
    );

    // hbase compact: a MOB family refused by name, nothing changed; the others compact.
    let before = common::files_under(&copy);
    let o = hfkit(&["hbase", "compact", copy.to_str().unwrap(), "m1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("family f is a MOB family"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(common::files_under(&copy), before);
    let o = hfkit(&[
        "hbase",
        "compact",
        copy.to_str().unwrap(),
        "m1",
        "--family",
        "g",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
}
