//! The `hfkit hbase` commands on the fixture root: list, describe, verify, get and scan of
//! tables and snapshots, clone; and the library's clone, compaction and export preserving the
//! cells.

use super::*;

#[test]
fn cli_lists_describes_and_verifies() {
    let Some(dir) = layout("cli_lists_describes_and_verifies") else {
        return;
    };
    let root = dir.join("root1");
    let r = root.to_str().unwrap();

    let o = ok(&["hbase", "ls", r]);
    let s = stdout(&o);
    assert!(
        s.contains("TABLE     ns1:t2  2 region(s) (+1 split/merge parent(s))  families f"),
        "{s}"
    );
    assert!(
        s.contains("SNAPSHOT  snap_t1  table t1  FLUSH v2  created 1700000300000"),
        "{s}"
    );
    assert!(s.ends_with("3 table(s), 2 snapshot(s)\n"), "{s}");

    let o = ok(&["hbase", "describe", r, "ns1:t2"]);
    let s = stdout(&o);
    let schema = std::fs::read_to_string(dir.join("expected/ns1_t2/schema.txt")).unwrap();
    let to_string = schema
        .lines()
        .nth(1)
        .unwrap()
        .strip_prefix("toString: ")
        .unwrap();
    assert_eq!(s.lines().nth(1), Some(to_string));
    assert!(s.contains("REGION 65374ed9eca7cccfe7a1fb7c3de41505  [, )  id 1700000000000  split/merge parent (not read)"), "{s}");
    assert!(s.contains("  f  cfca939b85130c57fc914135e3f5cb6f.65374ed9eca7cccfe7a1fb7c3de41505  reference top at 'r10'  5838 bytes  "), "{s}");
    let o = hfkit(&["hbase", "describe", r, "--snapshot", "snap_t1", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let files = v["regions"][1]["files"].as_array().unwrap();
    let archived = files
        .iter()
        .find(|f| f["name"] == "1c7152a2e13060a3cca94724b74a5911")
        .unwrap();
    assert_eq!(archived["kind"], "link");
    assert_eq!(archived["size"], 5071);
    assert!(archived["path"]
        .as_str()
        .unwrap()
        .contains("/archive/data/default/t1/"));

    let o = ok(&["hbase", "verify", r, "--snapshot", "snap_t1"]);
    let (stores, total) = expected_verify(&dir, "snap_t1", &open(&root, View::Snapshot("snap_t1")));
    let want = std::fs::read_to_string(dir.join("expected/snap_t1/verify.txt")).unwrap();
    let s = stdout(&o);
    let first = want.lines().next().unwrap().to_string();
    for l in stores
        .iter()
        .map(|l| format!("store {l}"))
        .chain([total, first])
    {
        assert!(s.contains(&format!("{l}\n")), "{l} not in {s}");
    }
    let bad = dir.join("corrupt/missing_archived_file");
    let o = hfkit(&words(&format!(
        "hbase verify {} --snapshot snap_t1",
        bad.to_str().unwrap()
    )));
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("1 problem(s)")
            && err.contains("can't find hfile 1c7152a2e13060a3cca94724b74a5911"),
        "{err}"
    );
    // --json: the same digests and problems on standard output.
    let o = ok(&["hbase", "verify", r, "--snapshot", "snap_t1", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["ok"].clone(), v["snapshot"].clone()),
        (true.into(), "snap_t1".into())
    );
    for st in v["stores"].as_array().unwrap() {
        let line = format!(
            "store {}/{} files={} cells={} sha256={}\n",
            st["region"].as_str().unwrap(),
            st["family"].as_str().unwrap(),
            st["files"],
            st["cells"],
            st["sha256"].as_str().unwrap()
        );
        assert!(s.contains(&line), "{line} not in {s}");
    }
    let total = format!(
        "total_cells={} sha256={}\n",
        v["total_cells"],
        v["total_sha256"].as_str().unwrap()
    );
    assert!(s.contains(&total), "{total} not in {s}");
    let o = hfkit(&[
        "hbase",
        "verify",
        bad.to_str().unwrap(),
        "--snapshot",
        "snap_t1",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert!(v["problems"][0]
        .as_str()
        .unwrap()
        .contains("can't find hfile 1c7152a2e13060a3cca94724b74a5911"));
    let o = hfkit(&["hbase", "describe", r]);
    assert_eq!(o.status.code(), Some(2), "TABLE or --snapshot is required");
    for cmd in ["ls", "describe", "verify", "get", "scan"] {
        let o = hfkit(&["hbase", cmd, "--help"]);
        assert!(stdout(&o).contains("Example"), "hbase {cmd} --help");
    }
}

#[test]
fn cli_get_and_scan_read_tables_and_snapshots() {
    let Some(dir) = layout("cli_get_and_scan_read_tables_and_snapshots") else {
        return;
    };
    let root = dir.join("root1");
    let r = root.to_str().unwrap();
    // A raw scan of every version prints the union of the live store files' cells.
    for (exp, target) in [
        ("ns1_t2", vec!["ns1:t2"]),
        ("snap_t1", vec!["--snapshot", "snap_t1"]),
    ] {
        let mut args = vec!["hbase", "scan", r];
        args.extend(target.iter());
        args.extend(["--raw", "--versions", "1000", "--format", "cells"]);
        let o = hfkit(&args);
        assert!(o.status.success(), "{o:?}");
        let skip = exp
            .contains("t2")
            .then_some("65374ed9eca7cccfe7a1fb7c3de41505");
        let want: Vec<String> = expected_union(&dir, exp, skip)
            .iter()
            .map(|l| l.rsplit_once(' ').unwrap().0.to_string())
            .collect();
        assert_eq!(stdout(&o).lines().collect::<Vec<_>>(), want, "{exp}");
    }
    // Gets: the top daughter of the split holds r15; the snapshot reads the same.
    for target in [vec!["ns1:t2"], vec!["--snapshot", "snap_t2"]] {
        let mut args = vec!["hbase", "get", r];
        args.extend(target.iter());
        args.extend(["r15", "--format", "tsv", "--now", "1700000400000"]);
        let o = hfkit(&args);
        assert!(o.status.success(), "{o:?}");
        assert_eq!(stdout(&o), "r15\tf:c\t1700000000015\tPut\tvalue-15\n");
    }
    let o = ok(&words(&format!("hbase scan {} t3 --start g --stop p --column cf1:q1 --versions 2 --format tsv --now 1700000400000", r)));
    let s = stdout(&o);
    assert!(
        s.lines().all(|l| l.split('\t').nth(1) == Some("cf1:q1")),
        "{s}"
    );
    assert_eq!(s.lines().filter(|l| l.starts_with("k\t")).count(), 2, "{s}");
    let o = hfkit(&["hbase", "get", r, "nosuch", "r1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no table nosuch"));
}

#[test]
fn clone_compact_and_export_preserve_the_cells() {
    let Some(dir) = layout("clone_compact_and_export_preserve_the_cells") else {
        return;
    };
    let now = 1_700_000_400_000;
    let hb = HBaseRoot::open(&dir.join("root1")).unwrap();
    let tmp = tempfile::tempdir().unwrap();

    let snap = hb.snapshot("snap_t1").unwrap();
    let source = snap.reader().unwrap();
    let (raw, user) = (read_all(&source, true, now), read_all(&source, false, now));
    assert_eq!(raw.len(), 150);
    let cloned = tmp.path().join("c1");
    let report = clone_to_table(&snap, &cloned, Some("ns:c1"), now).unwrap();
    assert_eq!((report.regions, report.files_linked), (3, 12));
    let t = Table::open(&cloned).unwrap();
    assert_eq!(t.manifest().unwrap().table, "ns:c1");
    assert!(t.check().unwrap().is_ok());
    assert_eq!(
        read_all(&table_reader(&cloned), true, now),
        raw,
        "clone: raw"
    );
    assert_eq!(read_all(&table_reader(&cloned), false, now), user, "clone");

    t.compact(hfkit::table::compact::CompactOptions {
        major: true,
        now_ms: now,
        ..Default::default()
    })
    .unwrap();
    let m = t.manifest().unwrap();
    assert_eq!(m.files.len(), 6, "one file per store");
    let compacted_raw = read_all(&table_reader(&cloned), true, now);
    assert!(
        compacted_raw.len() < raw.len(),
        "markers and masked cells dropped"
    );
    assert_eq!(
        read_all(&table_reader(&cloned), false, now),
        user,
        "major compaction"
    );

    let exported = tmp.path().join("export");
    t.export_table(None, &exported).unwrap();
    assert_eq!(read_all(&table_reader(&exported), true, now), compacted_raw);
    assert_eq!(
        read_all(&table_reader(&exported), false, now),
        user,
        "export"
    );

    // ... and as an HBase snapshot, read back as HBase-written snapshots are.
    let hroot = tmp.path().join("hbase");
    let opts = hfkit::hbase::export::ExportOptions {
        name: "c1_snap".into(),
        from_snapshot: None,
        table: None,
        creation_time: now,
    };
    let exported_table = Table::open(&exported).unwrap();
    let r = hfkit::hbase::export::export_snapshot(&exported_table, &hroot, &opts).unwrap();
    assert_eq!((r.regions, r.files), (3, 6));
    let back = HBaseRoot::open(&hroot)
        .unwrap()
        .snapshot("c1_snap")
        .unwrap();
    assert!(verify::verify(&back).is_ok());
    let back = back.reader().unwrap();
    assert_eq!(
        read_all(&back, true, now),
        compacted_raw,
        "HBase snapshot: raw"
    );
    assert_eq!(read_all(&back, false, now), user, "HBase snapshot");

    // A table with split references: the halves are rewritten, the parent is not read.
    let t2 = hb.table("ns1:t2").unwrap();
    let cloned2 = tmp.path().join("c2");
    let report = clone_to_table(&t2, &cloned2, None, now).unwrap();
    assert_eq!(
        (report.regions, report.files_linked, report.halves_written),
        (2, 0, 2)
    );
    let source = t2.reader().unwrap();
    assert_eq!(
        read_all(&table_reader(&cloned2), true, now),
        read_all(&source, true, now)
    );
    let m = Table::open(&cloned2).unwrap().manifest().unwrap();
    assert_eq!(
        m.regions
            .iter()
            .map(|r| r.end_key.clone())
            .collect::<Vec<_>>(),
        [b"r10".to_vec(), vec![]]
    );

    // Nothing is created when the clone fails (a file missing from the archive).
    let bad = HBaseRoot::open(&dir.join("corrupt/missing_archived_file"))
        .unwrap()
        .snapshot("snap_t1")
        .unwrap();
    let dest = tmp.path().join("c3");
    let err = clone_to_table(&bad, &dest, None, now)
        .unwrap_err()
        .to_string();
    assert!(err.contains("1c7152a2e13060a3cca94724b74a5911"), "{err}");
    assert!(!dest.exists());
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 4, "no staging left: {left:?}");
}

#[test]
fn cli_clone_hbase() {
    let Some(dir) = layout("cli_clone_hbase") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = dir.join("root1");
    let dest = tmp.path().join("t");
    let o = ok(&words(&format!(
        "table clone-hbase {} {} --snapshot snap_t2",
        root.to_str().unwrap(),
        dest.to_str().unwrap()
    )));
    assert!(stdout(&o).contains("cloned ns1:t2 into"), "{}", stdout(&o));
    let o = hfkit(&words(&format!(
        "get {} r15 --format tsv --now 1700000400000",
        dest.to_str().unwrap()
    )));
    assert_eq!(stdout(&o), "r15\tf:c\t1700000000015\tPut\tvalue-15\n");
    let o = hfkit(&words(&format!(
        "table clone-hbase {} t1 {}",
        root.to_str().unwrap(),
        dest.to_str().unwrap()
    )));
    assert_eq!(o.status.code(), Some(1), "DEST exists");
    assert!(String::from_utf8_lossy(&o.stderr).contains("exists and is not empty"));
    let o = hfkit(&["table", "clone-hbase", "--help"]);
    assert!(stdout(&o).contains("Examples ("));

    let hroot = tmp.path().join("hbase");
    let h = hroot.to_str().unwrap();
    let o = ok(&words(&format!(
        "hbase export-snapshot {} {} --name s1",
        dest.to_str().unwrap(),
        h
    )));
    assert!(
        stdout(&o).contains("of table ns1:t2: 2 region(s), 2 file(s)"),
        "{}",
        stdout(&o)
    );
    let o = hfkit(&["hbase", "verify", h, "--snapshot", "s1"]);
    assert!(o.status.success() && stdout(&o).ends_with("OK\n"), "{o:?}");
    let o = hfkit(&words(&format!(
        "hbase get {} --snapshot s1 r15 --format tsv --now 1700000400000",
        h
    )));
    assert_eq!(stdout(&o), "r15\tf:c\t1700000000015\tPut\tvalue-15\n");
    let o = hfkit(&words(&format!(
        "hbase export-snapshot {} {} --name s1",
        dest.to_str().unwrap(),
        h
    )));
    assert_eq!(o.status.code(), Some(1), "the name is taken");
    let o = hfkit(&["hbase", "export-snapshot", "--help"]);
    assert!(stdout(&o).contains("Examples ("));
}

#[test]
fn ls_reads_hbase_meta_and_names_unreadable_tables() {
    use hfkit::hbase::{RegionInfo, TableDescriptor};
    use hfkit::table::manifest::FamilyEntry;
    use hfkit::table::TableName;
    let Some((_, _tmp, root)) = root_copy("ls_reads_hbase_meta_and_names_unreadable_tables") else {
        return;
    };
    // hbase:meta's region directory is named by HBase's old (Jenkins hash) encoding.
    let meta = TableName::parse("hbase:meta").unwrap();
    let dir = root.join("data/hbase/meta");
    let td = TableDescriptor::from_families(meta.clone(), &[FamilyEntry::new("info")]);
    let bytes = td.to_file_bytes();
    std::fs::create_dir_all(dir.join(TABLEINFO_DIR)).unwrap();
    std::fs::write(
        dir.join(TABLEINFO_DIR).join(tableinfo_file_name(1, &bytes)),
        &bytes,
    )
    .unwrap();
    let info = RegionInfo {
        table: meta,
        start_key: vec![],
        end_key: vec![],
        region_id: 1,
        offline: false,
        split: false,
        replica_id: 0,
    };
    std::fs::create_dir_all(dir.join("1588230740/info")).unwrap();
    std::fs::write(dir.join("1588230740/.regioninfo"), info.to_file_bytes()).unwrap();
    let s = stdout(&ok(&["hbase", "ls", root.to_str().unwrap()]));
    assert!(
        s.contains("TABLE     hbase:meta  1 region(s)  families info"),
        "{s}"
    );

    // A region directory whose .regioninfo describes another region.
    let t3 = root.join("data/default/t3");
    std::fs::copy(
        t3.join("1462c4a9a00da50d18c920d052ee4d84/.regioninfo"),
        t3.join("8726e8cb721eb51c501fd56e361070f8/.regioninfo"),
    )
    .unwrap();
    let o = hfkit(&["hbase", "ls", root.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let s = stdout(&o);
    assert!(s.contains("TABLE     default:t3  ERROR ") && s.contains("8726e8cb721eb51c501fd56e361070f8/.regioninfo: describes region t3,g,1700000000000.1462c4a9a00da50d18c920d052ee4d84."), "{s}");
    assert!(
        s.contains("TABLE     default:t1  3 region(s)"),
        "the others are listed: {s}"
    );
}
