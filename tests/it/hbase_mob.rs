//! HBase MOB tables, offline (issue 41 item 2; formats/hbase-layout.md §"MOB tables"), against
//! `../shared/fixtures/hbase-mob` (a MOB table, its snapshot and its clone, written by HBase's
//! own MOB code, with the cells HBase's readers return): reads resolve reference cells to the
//! MOB files' cells (the table, the clone reading through the table's MOB files, the
//! snapshot), `--raw` shows them as stored and says so; the MOB files of a snapshot, a table
//! and a clone are verified, with one digest; a clone into an hfkit table carries the values;
//! a missing or damaged MOB file fails naming it; `hbase compact` refuses a MOB family by
//! name; an import into a MOB family writes its values inline and keeps the MOB attributes.

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
    // A table's verify covers its MOB files as well (the clone's are links to m1's): the MOB
    // store of the table, of its clone and of its snapshot has the same cells, the fixture's
    // MOB cells, and the same digest.
    let mob_store = |out: &str| -> String {
        let line = out
            .lines()
            .find(|l| l.contains("/f files=4 cells=24 sha256="))
            .unwrap_or_else(|| panic!("no MOB store in {out}"));
        line.rsplit_once("sha256=").unwrap().1.to_string()
    };
    let want_mob =
        expected_lines(&dir.join("expected/m1/mob/f34a7e55e044c79b9156ed8a7cb9f94a/f.cells.txt"));
    assert_eq!(want_mob.len(), 24);
    let snap_digest = mob_store(&out);
    for (table, region) in [
        ("m1", "f34a7e55e044c79b9156ed8a7cb9f94a"),
        ("m1_clone", "b1e30713268ea97c80f548ce7ec3cd3f"),
    ] {
        let o = hfkit(&["hbase", "verify", r, table]);
        let out = text(&o.stdout);
        assert!(o.status.success(), "{table}: {out}{}", text(&o.stderr));
        assert!(
            out.contains(&format!("store {region}/f files=4 cells=24 ")),
            "{out}"
        );
        assert_eq!(mob_store(&out), snap_digest, "{table}");
    }
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
    // Asked for (HBase's empty.value.on.mobcell.miss): the reference's key, type and tags
    // with an empty value, the other versions resolved, and a warning naming the file.
    let o = hfkit(&[
        "hbase",
        "get",
        copy.to_str().unwrap(),
        "m1",
        "a1",
        "--column",
        "f:b",
        "--versions",
        "3",
        "--format",
        "cells",
        "--empty-value-on-mob-miss",
    ]);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("6131 66 62 1700000001002 Put - 0001050003066d31"),
        "{out}"
    );
    assert!(
        lines[1].contains(" 1700000000002 Put 6269672d302d"),
        "{out}"
    );
    assert!(
        err.contains("1 MOB reference(s) read as empty values") && err.contains(gone),
        "{err}"
    );

    // A damaged MOB file (a byte of its first data block flipped): the read that needs it and
    // the table's verify fail naming it.
    let damaged_root = tmp.path().join("damaged");
    common::copy_dir(&root, &damaged_root);
    let damaged = damaged_root
        .join("mobdir/data/default/m1/f34a7e55e044c79b9156ed8a7cb9f94a/f")
        .join(gone);
    let mut bytes = std::fs::read(&damaged).unwrap();
    bytes[40] ^= 0xff;
    std::fs::write(&damaged, bytes).unwrap();
    let d = damaged_root.to_str().unwrap();
    let o = hfkit(&["hbase", "get", d, "m1", "a1", "--column", "f:b"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains(gone), "{err}");
    let o = hfkit(&["hbase", "verify", d, "m1"]);
    let all = format!("{}{}", text(&o.stdout), text(&o.stderr));
    assert_ne!(o.status.code(), Some(0), "{all}");
    assert!(all.contains(gone), "{all}");

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

/// hfkit's import into a family declared `IS_MOB => true` writes its values inline, as HBase's
/// bulk load does (bulk-loaded files go into the store as they are; only a flush or a MOB
/// compaction moves values to MOB files, and reads resolve reference cells only): exported as
/// an HBase snapshot, the family keeps its MOB attributes, every value reads inline (no
/// reference tags, nothing under `mobdir/`), and a clone back keeps the attributes.
#[test]
fn an_import_into_a_mob_family_writes_values_inline_and_keeps_the_mob_attributes() {
    let tmp = common::tmpdir();
    let dir = tmp.path();
    let schema = dir.join("s.toml");
    std::fs::write(
        &schema,
        "[table]\nname = \"docs\"\n[[family]]\nname = \"f\"\nIS_MOB = true\n\
         MOB_THRESHOLD = 10\n[rowkey]\nspec = \"id\"\n[[column]]\nsource = \"body\"\n\
         cell = \"f:body\"\n",
    )
    .unwrap();
    let input = dir.join("in.csv");
    std::fs::write(
        &input,
        "id,body\nrow-0001,short\nrow-0002,a value longer than the threshold of ten bytes\n",
    )
    .unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let (t, root, back) = (dir.join("t"), dir.join("root"), dir.join("back"));
    let o = hfkit(&[
        "import",
        "--schema",
        &s(&schema),
        &s(&input),
        "--table",
        &s(&t),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = hfkit(&[
        "hbase",
        "export-snapshot",
        &s(&t),
        &s(&root),
        "--name",
        "s1",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = hfkit(&["hbase", "describe", &s(&root), "--snapshot", "s1"]);
    let shown = text(&o.stdout);
    assert!(
        shown.contains("IS_MOB => 'true'") && shown.contains("MOB_THRESHOLD => '10'"),
        "{shown}"
    );
    let (raw, _) = cells(&["hbase", "scan", &s(&root), "--snapshot", "s1", "--raw"]);
    assert_eq!(raw.len(), 2, "{raw:?}");
    assert!(raw.iter().all(|l| l.ends_with(" -")), "tags: {raw:?}");
    assert!(raw.iter().any(|l| l.contains(&hfkit::format::text::hex(
        b"a value longer than the threshold"
    ))));
    assert!(!root.join("mobdir").exists());
    let o = hfkit(&[
        "table",
        "clone-hbase",
        &s(&root),
        "--snapshot",
        "s1",
        &s(&back),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = hfkit(&["table", "describe", &s(&back)]);
    let shown = text(&o.stdout);
    assert!(
        shown.contains("IS_MOB => 'true'") && shown.contains("MOB_THRESHOLD => '10'"),
        "{shown}"
    );
}
