//! Directory tables: atomic attach under injected crashes, concurrent readers, and attaching
//! HBase-written files.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use hfkit::format::cell::Cell;
use hfkit::format::reader::HFileReader;
use hfkit::format::writer::{HFileWriter, WriterOptions};
use hfkit::table::directory::Table;
use hfkit::table::fsops::FaultFs;
use hfkit::table::manifest::FamilyEntry;

fn write_hfile(path: &Path, family: &str, rows: impl Iterator<Item = String>, tag: &str) {
    let mut w = HFileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    for r in rows {
        w.append(&Cell::put(r.as_bytes(), family.as_bytes(), b"q", 5, tag.as_bytes()).as_ref())
            .unwrap();
    }
    std::fs::write(path, w.finish().unwrap().0).unwrap();
}

/// A bulk-load dir with one file inside region 1 and one straddling both regions.
fn bulk_dir(root: &Path, tag: &str) -> PathBuf {
    let d = root.join(format!("bulk-{tag}"));
    std::fs::create_dir_all(d.join("f")).unwrap();
    write_hfile(
        &d.join("f").join("straddles"),
        "f",
        (0..60)
            .map(|i| format!("{}{i:03}", (b'a' + (i % 26) as u8) as char))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter(),
        tag,
    );
    write_hfile(
        &d.join("f").join("inside"),
        "f",
        (0..20).map(|i| format!("n{i:03}")),
        tag,
    );
    std::fs::create_dir_all(d.join("_logs")).unwrap();
    d
}

pub(crate) fn new_table(dir: &Path) -> Table {
    Table::create(
        dir,
        "default:t",
        vec![FamilyEntry::new("f")],
        &[b"m".to_vec()],
    )
    .unwrap()
}

#[test]
fn attach_splits_straddling_files_and_commits_all_or_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let t = new_table(&tmp.path().join("t"));
    let r = t.attach(&bulk_dir(tmp.path(), "one")).unwrap();
    assert_eq!(r.split_inputs, 1);
    assert_eq!(r.files.len(), 3, "straddling file split in two, plus one");
    assert_eq!(r.version, 1);
    let cells = common::live_file_cells(&t);
    assert_eq!(cells.len(), 60 + 20);
    let check = t.check().unwrap();
    assert!(check.is_ok() && check.orphans.is_empty(), "{check:?}");
    // A second load gets a higher sequence id.
    let r2 = t.attach(&bulk_dir(tmp.path(), "two")).unwrap();
    assert!(r2.seq_id > r.seq_id);
    assert_eq!(common::live_file_cells(&t).len(), 160);
    // A bad input changes nothing.
    let bad = tmp.path().join("bad");
    std::fs::create_dir_all(bad.join("g")).unwrap();
    write_hfile(
        &bad.join("g").join("x"),
        "g",
        (0..3).map(|i| format!("x{i}")),
        "bad",
    );
    let before = t.manifest().unwrap();
    let err = t.attach(&bad).unwrap_err().to_string();
    assert!(
        err.contains("families not in table") && err.contains('g'),
        "{err}"
    );
    assert_eq!(t.manifest().unwrap(), before);
    std::fs::create_dir_all(bad.join("f")).unwrap();
    std::fs::write(bad.join("f").join("garbage"), b"not an hfile").unwrap();
    std::fs::remove_dir_all(bad.join("g")).unwrap();
    let err = t.attach(&bad).unwrap_err().to_string();
    assert!(err.contains("garbage"), "{err}");
    assert_eq!(t.manifest().unwrap(), before);
}

#[test]
fn a_crash_at_every_commit_step_leaves_before_or_after_never_a_mix() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("base");
    let t = new_table(&base);
    t.attach(&bulk_dir(tmp.path(), "first")).unwrap();
    let input = bulk_dir(tmp.path(), "second");
    let before = common::live_file_cells(&t);
    let after = {
        let d = tmp.path().join("clean");
        common::copy_dir(&base, &d);
        let c = Table::open(&d).unwrap();
        c.attach(&input).unwrap();
        common::live_file_cells(&c)
    };
    assert_ne!(before, after);
    let mut points = 0;
    for fail_at in 0.. {
        let d = tmp.path().join(format!("crash{fail_at}"));
        common::copy_dir(&base, &d);
        let fs = Arc::new(FaultFs::new(fail_at));
        let result = Table::open(&d).unwrap().with_fs(fs.clone()).attach(&input);
        let t = Table::open(&d).unwrap();
        let check = t.check().unwrap();
        assert!(check.is_ok(), "fault {fail_at}: {check:?}");
        let now = common::live_file_cells(&t);
        match result {
            Ok(_) => {
                assert_eq!(now, after, "completed attach");
                break;
            }
            Err(_) => {
                assert!(
                    now == before || now == after,
                    "fault {fail_at}: a mix of before and after"
                );
                points += 1;
            }
        }
        // The next writer cleans the leftovers and can attach.
        let r = t.attach(&bulk_dir(&d, "third")).unwrap();
        let check = t.check().unwrap();
        assert!(
            check.is_ok() && check.orphans.is_empty(),
            "fault {fail_at}: {check:?} {r:?}"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
    eprintln!("injected a crash at each of {points} commit steps");
    assert!(points >= 10, "only {points} crash points");
}

#[test]
fn readers_see_one_whole_manifest_version_while_attaches_repeat() {
    let tmp = tempfile::tempdir().unwrap();
    let t = new_table(&tmp.path().join("t"));
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let t = t.clone();
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut reads = 0u64;
            while !stop.load(Ordering::SeqCst) {
                let m = t.manifest().unwrap();
                let mut cells = 0u64;
                for e in &m.files {
                    cells += HFileReader::open(t.file_path(e)).unwrap().entry_count();
                }
                // Every attach adds exactly 80 cells.
                assert_eq!(cells, 80 * m.version, "version {}", m.version);
                reads += 1;
            }
            reads
        })
    };
    for i in 0..8 {
        t.attach(&bulk_dir(tmp.path(), &format!("load{i}")))
            .unwrap();
    }
    stop.store(true, Ordering::SeqCst);
    let reads = reader.join().unwrap();
    assert!(reads > 0);
}

#[test]
fn hbase_written_fixtures_attach_and_read_back() {
    let Some(root) = common::fixtures_root("hbase_written_fixtures_attach") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let bulk = tmp.path().join("bulk");
    std::fs::create_dir_all(bulk.join("cf")).unwrap();
    let mut want = Vec::new();
    for f in common::fixtures(&root) {
        if ![
            "c_NONE__e_NONE__b_ROW",
            "c_SNAPPY__e_NONE__b_NONE",
            "c_GZ__e_NONE__b_ROWCOL",
            "index_3level",
        ]
        .contains(&f.name.as_str())
        {
            continue;
        }
        std::fs::copy(&f.hfile, bulk.join("cf").join(&f.name)).unwrap();
        want.extend(f.cells_txt().lines().map(String::from));
    }
    want.sort();
    let t = Table::create(
        &tmp.path().join("t"),
        "default:t",
        vec![FamilyEntry::new("cf")],
        &[b"row0000001".to_vec(), b"row00000200".to_vec()],
    )
    .unwrap();
    let r = t.attach(&bulk).unwrap();
    assert_eq!(r.split_inputs, 4, "every fixture spans the split points");
    assert_eq!(common::live_file_cells(&t), want);
    assert!(t.check().unwrap().is_ok());
}
