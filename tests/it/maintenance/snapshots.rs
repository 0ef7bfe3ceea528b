//! Snapshots of directory tables: isolated from later writes, their files freed when deleted,
//! restored and cloned, and crashes at every step of a restore or a creation.

use super::*;

#[test]
fn snapshots_are_isolated_from_later_writes_and_free_their_files_when_deleted() {
    let tmp = tmpdir();
    let (t, families) = random_table(tmp.path(), 11, 3);
    let s1 = t.snapshot_create("s1").unwrap();
    assert_eq!(s1.manifest_version, t.manifest().unwrap().version);
    let at_s1 = scan_manifest(&t, &t.snapshot("s1").unwrap().manifest, NOW, true);
    let mut rng = Rng(5);
    t.attach(&random_bulk(tmp.path(), &mut rng, &families, "later"))
        .unwrap();
    major(&t);
    t.snapshot_create("s2").unwrap();
    t.attach(&random_bulk(tmp.path(), &mut rng, &families, "later2"))
        .unwrap();
    major(&t);
    // The snapshots still read as they were (raw: every cell, markers included).
    assert_eq!(
        scan_manifest(&t, &t.snapshot("s1").unwrap().manifest, NOW, true),
        at_s1
    );
    let check = t.check().unwrap();
    assert!(check.is_ok() && check.orphans.is_empty(), "{check:?}");
    let names: Vec<_> = t.snapshots().unwrap().into_iter().map(|s| s.name).collect();
    assert_eq!(names, ["s1", "s2"]);
    assert!(t.snapshot_create("s1").is_err(), "names are unique");
    for bad in ["", ".x", "-x", "a/b", "a b"] {
        assert!(t.snapshot_create(bad).is_err(), "{bad:?}");
    }
    // Deleting s1 frees what only s1 named; files s2 or the live manifest name stay.
    let keep: std::collections::BTreeSet<PathBuf> = {
        let m = t.manifest().unwrap();
        let s2 = t.snapshot("s2").unwrap().manifest;
        m.files
            .iter()
            .chain(s2.files.iter())
            .map(|e| t.file_path(e))
            .collect()
    };
    assert!(data_files(&t).len() > keep.len());
    let removed = t.snapshot_delete("s1").unwrap();
    assert!(removed > 0);
    assert_eq!(data_files(&t), keep);
    assert!(t.snapshot("s1").is_err());
    t.snapshot_delete("s2").unwrap();
    let live: std::collections::BTreeSet<PathBuf> = t
        .manifest()
        .unwrap()
        .files
        .iter()
        .map(|e| t.file_path(e))
        .collect();
    assert_eq!(data_files(&t), live);
}

#[test]
fn restore_and_clone_bring_back_a_snapshot() {
    let tmp = tmpdir();
    let (t, families) = random_table(tmp.path(), 12, 3);
    t.snapshot_create("s").unwrap();
    let at_s = scan_live(&t, NOW);
    let mut rng = Rng(9);
    t.attach(&random_bulk(tmp.path(), &mut rng, &families, "x"))
        .unwrap();
    major(&t);
    assert_ne!(scan_live(&t, NOW), at_s);
    let seq_before = t.manifest().unwrap().next_seq_id;
    // Clone: a new table of hard links.
    let c = t
        .snapshot_clone("s", &tmp.path().join("clone"), Some("default:c"))
        .unwrap();
    assert_eq!(scan_live(&c, NOW), at_s);
    assert_eq!(c.manifest().unwrap().table, "default:c");
    assert!(c.check().unwrap().is_ok());
    assert!(t
        .snapshot_clone("s", &tmp.path().join("clone"), None)
        .is_err());
    // Restore: one commit; sequence ids keep increasing.
    let r = t.snapshot_restore("s").unwrap();
    assert_eq!(scan_live(&t, NOW), at_s);
    let m = t.manifest().unwrap();
    assert_eq!(m.version, r.version);
    assert_eq!(m.next_seq_id, seq_before);
    let check = t.check().unwrap();
    assert!(check.is_ok() && check.orphans.is_empty(), "{check:?}");
}

#[test]
fn a_crash_at_every_step_of_a_restore_leaves_before_or_after() {
    let tmp = tmpdir();
    let (t, families) = random_table(tmp.path(), 13, 2);
    t.snapshot_create("s").unwrap();
    let mut rng = Rng(3);
    t.attach(&random_bulk(tmp.path(), &mut rng, &families, "x"))
        .unwrap();
    major(&t);
    let base = t.dir().to_path_buf();
    let before = common::live_file_cells(&t);
    let after = {
        let d = tmp.path().join("clean");
        common::copy_dir(&base, &d);
        let c = Table::open(&d).unwrap();
        c.snapshot_restore("s").unwrap();
        common::live_file_cells(&c)
    };
    assert_ne!(before, after);
    let mut points = 0;
    for fail_at in 0.. {
        let d = tmp.path().join(format!("crash{fail_at}"));
        common::copy_dir(&base, &d);
        let fs = Arc::new(FaultFs::new(fail_at));
        let result = Table::open(&d).unwrap().with_fs(fs).snapshot_restore("s");
        let t = Table::open(&d).unwrap();
        let check = t.check().unwrap();
        assert!(check.is_ok(), "fault {fail_at}: {check:?}");
        let now = common::live_file_cells(&t);
        let done = result.is_ok();
        if done {
            assert_eq!(now, after);
        } else {
            assert!(now == before || now == after, "fault {fail_at}: a mix");
            points += 1;
        }
        // The snapshot survives, and the next writer cleans up.
        assert!(t.snapshot("s").is_ok());
        clean_up_as_the_next_writer(&t, fail_at);
        std::fs::remove_dir_all(&d).unwrap();
        if done {
            break;
        }
    }
    eprintln!("injected a crash at each of {points} restore steps");
    assert!(points >= 5, "only {points} crash points");
}

#[test]
fn a_crash_while_creating_a_snapshot_leaves_none_or_all_of_it() {
    let tmp = tmpdir();
    let (t, _) = random_table(tmp.path(), 14, 1);
    let base = t.dir().to_path_buf();
    for fail_at in 0.. {
        let d = tmp.path().join(format!("crash{fail_at}"));
        common::copy_dir(&base, &d);
        let fs = Arc::new(FaultFs::new(fail_at));
        let result = Table::open(&d).unwrap().with_fs(fs).snapshot_create("s");
        let t = Table::open(&d).unwrap();
        match t.snapshot("s") {
            Ok(s) => assert_eq!(s.manifest, t.manifest().unwrap()),
            Err(_) => assert!(result.is_err()),
        }
        let lock = t.lock().unwrap();
        t.collect_garbage(&lock).unwrap();
        drop(lock);
        assert!(t.snapshots().is_ok());
        std::fs::remove_dir_all(&d).unwrap();
        if result.is_ok() {
            break;
        }
    }
}
