//! Snapshot export (`hbase::export`, HBase's ExportSnapshot offline): what HBase reads back,
//! a killed export rerun, and snapshot copies between roots.

use super::*;

#[test]
fn snapshot_export_writes_what_hbase_reads() {
    let Some(dir) = layout("snapshot_export_writes_what_hbase_reads") else {
        return;
    };
    let now = 1_700_000_400_000;
    let tmp = tempfile::tempdir().unwrap();
    let src = HBaseRoot::open(&dir.join("root1"))
        .unwrap()
        .table("t1")
        .unwrap();
    let table_dir = tmp.path().join("t1");
    hfkit::hbase::clone::clone_to_table(&src, &table_dir, Some("ns9:tx"), now).unwrap();
    let t = Table::open(&table_dir).unwrap();
    t.snapshot_create("before").unwrap();
    t.compact(hfkit::table::compact::CompactOptions {
        major: true,
        now_ms: now,
        ..Default::default()
    })
    .unwrap();
    let root = tmp.path().join("hbase");
    for (name, from) in [("live", None), ("old", Some("before"))] {
        let opts = ExportOptions {
            name: name.into(),
            from_snapshot: from.map(str::to_string),
            table: None,
            creation_time: now + 7,
        };
        export_snapshot(&t, &root, &opts).unwrap();
        let m = match from {
            Some(s) => t.snapshot(s).unwrap().manifest,
            None => t.manifest().unwrap(),
        };

        // The bytes decode to exactly the fields written.
        let sdir = root.join(".hbase-snapshot").join(name);
        let info = proto::SnapshotDescription::decode(
            std::fs::read(sdir.join(".snapshotinfo"))
                .unwrap()
                .as_slice(),
        )
        .unwrap();
        assert_eq!(
            info,
            proto::SnapshotDescription {
                name: name.into(),
                table: Some("ns9:tx".into()),
                creation_time: Some(now + 7),
                r#type: Some(1),
                version: Some(2),
                owner: None,
                ttl: None,
                max_file_size: None,
            }
        );
        let data = proto::SnapshotDataManifest::decode(
            std::fs::read(sdir.join("data.manifest"))
                .unwrap()
                .as_slice(),
        )
        .unwrap();
        let attrs = |pairs: &[(&str, &str)]| -> Vec<proto::BytesBytesPair> {
            pairs
                .iter()
                .map(|(a, b)| proto::BytesBytesPair {
                    first: a.as_bytes().to_vec(),
                    second: b.as_bytes().to_vec(),
                })
                .collect()
        };
        let schema = &data.table_schema;
        assert_eq!(
            schema.table_name,
            Some(proto::TableName {
                namespace: b"ns9".to_vec(),
                qualifier: b"tx".to_vec()
            })
        );
        assert_eq!(schema.attributes, attrs(&[("IS_META", "false")]));
        assert!(schema.configuration.is_empty());
        let cf2 = &schema.column_families[1];
        assert_eq!(cf2.name, b"cf2");
        assert_eq!(
            cf2.attributes,
            attrs(&[
                ("INDEX_BLOCK_ENCODING", "NONE"),
                ("VERSIONS", "5"),
                ("KEEP_DELETED_CELLS", "TRUE"),
                ("DATA_BLOCK_ENCODING", "FAST_DIFF"),
                ("TTL", "315360000"),
                ("MIN_VERSIONS", "1"),
                ("REPLICATION_SCOPE", "0"),
                ("BLOOMFILTER", "ROWCOL"),
                ("IN_MEMORY", "false"),
                ("COMPRESSION", "GZ"),
                ("BLOCKCACHE", "true"),
                ("BLOCKSIZE", "8192"),
            ])
        );
        assert_eq!(data.region_manifests.len(), m.regions.len());
        for (rm, r) in data.region_manifests.iter().zip(&m.regions) {
            let ri = &rm.region_info;
            assert_eq!(rm.version, None);
            assert_eq!(
                (ri.region_id, ri.start_key.as_deref(), ri.end_key.as_deref()),
                (
                    (now + 7) as u64,
                    Some(&r.start_key[..]),
                    Some(&r.end_key[..])
                )
            );
            assert_eq!(
                (ri.offline, ri.split, ri.replica_id),
                (Some(false), Some(false), Some(0))
            );
            let mut input = b"ns9:tx,".to_vec();
            input.extend_from_slice(&r.start_key);
            input.extend_from_slice(format!(",{}", now + 7).as_bytes());
            let encoded = hex(&Md5::digest(&input));
            let mut files = 0;
            for ff in &rm.family_files {
                let family = String::from_utf8(ff.family_name.clone()).unwrap();
                for sf in &ff.store_files {
                    let e = m
                        .files
                        .iter()
                        .find(|e| {
                            e.region == r.id
                                && e.family == family
                                && sf.name.starts_with(&e.name[..32])
                        })
                        .unwrap();
                    assert_eq!(sf.name, format!("{}_SeqId_{}_", &e.name[..32], e.seq_id));
                    assert_eq!((sf.file_size, &sf.reference), (Some(e.size), &None));
                    let archived = root
                        .join("archive/data/ns9/tx")
                        .join(&encoded)
                        .join(&family)
                        .join(&sf.name);
                    assert_eq!(std::fs::metadata(&archived).unwrap().len(), e.size);
                    files += 1;
                }
            }
            assert_eq!(files, m.files.iter().filter(|e| e.region == r.id).count());
        }

        // Read back through the code that reads HBase-written snapshots: identical cells.
        let back = HBaseRoot::open(&root).unwrap().snapshot(name).unwrap();
        let report = verify::verify(&back);
        assert!(report.is_ok(), "{:?}", report.problems);
        let reader = back.reader().unwrap();
        let hfkit_reader = match from {
            Some(s) => {
                let snap_dir = tmp.path().join(format!("restored-{s}"));
                t.snapshot_clone(s, &snap_dir, None).unwrap();
                table_reader(&snap_dir)
            }
            None => table_reader(&table_dir),
        };
        let with_seq = |r: &hfkit::table::read::TableReader| -> Vec<String> {
            let opts = ReadOptions {
                raw: true,
                max_versions: u32::MAX,
                ..Default::default()
            };
            r.scan(&opts)
                .unwrap()
                .flat_map(|row| row.unwrap().cells)
                .map(|c| hfkit::format::text::cell_line(&c.as_ref(), true))
                .collect()
        };
        assert_eq!(with_seq(&reader), with_seq(&hfkit_reader), "{name}: raw");
        assert_eq!(
            read_all(&reader, false, now),
            read_all(&hfkit_reader, false, now),
            "{name}"
        );
    }
    // The pre-compaction snapshot still holds the markers the compaction dropped.
    let hb = HBaseRoot::open(&root).unwrap();
    let live = hb.snapshot("live").unwrap().reader().unwrap();
    let old = hb.snapshot("old").unwrap().reader().unwrap();
    assert!(read_all(&old, true, now).len() > read_all(&live, true, now).len());

    // A name in use or not valid: refused, nothing written.
    let before = walk(&root);
    let opts = ExportOptions {
        name: "live".into(),
        from_snapshot: None,
        table: Some("other".into()),
        creation_time: now,
    };
    let err = export_snapshot(&t, &root, &opts).unwrap_err().to_string();
    assert!(err.contains("already exists"), "{err}");
    let opts = ExportOptions {
        name: ".bad".into(),
        ..opts
    };
    assert!(export_snapshot(&t, &root, &opts).is_err());
    assert_eq!(walk(&root), before);
}

/// Runs `hfkit hbase export-snapshot TABLE ROOT --name NAME` until it pauses at `pause` (the
/// test hook `HFKIT_TEST_EXPORT_PAUSE`), then SIGKILLs it.
fn kill_export_at(table: &Path, root: &Path, name: &str, pause: &str) {
    let (table, root) = (table.to_str().unwrap(), root.to_str().unwrap());
    common::kill_export_when_paused(
        &["hbase", "export-snapshot", table, root, "--name", name],
        pause,
    );
}

/// The files under `root/archive/` no snapshot of `root` names (back-reference directories
/// aside).
fn unnamed_archive_files(root: &Path) -> Vec<PathBuf> {
    let hb = HBaseRoot::open(root).unwrap();
    let mut named = std::collections::BTreeSet::new();
    for s in hb.snapshots().unwrap() {
        let m = hb.snapshot(&s.name).unwrap();
        for r in &m.regions {
            for ff in &r.families {
                let family = String::from_utf8_lossy(&ff.family).into_owned();
                for f in &ff.files {
                    named.insert(m.resolve(r, &family, f).unwrap().path);
                }
            }
        }
    }
    walk(&root.join("archive"))
        .into_iter()
        .filter(|p| p.is_file() && !named.contains(p))
        .collect()
}

/// A SIGKILLed `hbase export-snapshot` (while copying, or moving the copies into the archive)
/// leaves no snapshot; the rerun leaves no file in `archive/` that no snapshot names
/// and nothing under `.hbase-snapshot/.tmp/`, and its snapshot verifies.
#[test]
fn killed_snapshot_export_leaves_nothing_unnamed_after_a_rerun() {
    let Some(dir) = layout("killed_snapshot_export_leaves_nothing_unnamed_after_a_rerun") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let snap = HBaseRoot::open(&dir.join("root1"))
        .unwrap()
        .snapshot("snap_t1")
        .unwrap();
    let table = tmp.path().join("t");
    clone_to_table(&snap, &table, None, 1_700_000_400_000).unwrap();
    let root = tmp.path().join("hbase");
    // Killed while copying, after every copy (before the list of moves), while moving, and
    // after every move (before the rename).
    let points = [
        ("s1", "copied:5"),
        ("s2", "copied:12"),
        ("s3", "moved:5"),
        ("s4", "moved:12"),
    ];
    for (name, pause) in points {
        kill_export_at(&table, &root, name, pause);
        assert!(
            !root.join(".hbase-snapshot").join(name).exists(),
            "{pause}: the snapshot is not visible"
        );
        ok(&[
            "hbase",
            "export-snapshot",
            table.to_str().unwrap(),
            root.to_str().unwrap(),
            "--name",
            name,
        ]);
        assert_eq!(
            unnamed_archive_files(&root),
            Vec::<PathBuf>::new(),
            "{pause}"
        );
        let staging: Vec<_> = std::fs::read_dir(root.join(".hbase-snapshot/.tmp"))
            .into_iter()
            .flatten()
            .map(|e| e.unwrap().path())
            .collect();
        assert!(staging.is_empty(), "{pause}: {staging:?}");
        let report = verify::verify(&HBaseRoot::open(&root).unwrap().snapshot(name).unwrap());
        assert!(report.is_ok(), "{pause}: {:?}", report.problems);
        assert_eq!(report.total_sha256, verify::verify(&snap).total_sha256);
    }
}

/// `hbase copy-snapshot` (HBase's ExportSnapshot between roots): each of root1's snapshots is
/// copied with the files its links and references reach, at their archive paths, and reads
/// with the source's digests and cells (a clone of the copy scans as a clone of the source);
/// a name the target has is refused; files already archived are not copied again; a copy
/// SIGKILLed while moving its files in leaves no snapshot, and the next copy leaves no file
/// that no snapshot names; a bandwidth cap holds the copy back.
#[test]
fn snapshots_copy_between_roots_as_export_snapshot_does() {
    let Some(dir) = layout("snapshots_copy_between_roots_as_export_snapshot_does") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let src = dir.join("root1");
    let dest = tmp.path().join("copy");
    let (src_s, dest_s) = (src.to_str().unwrap(), dest.to_str().unwrap());
    for snap in ["snap_t1", "snap_t2"] {
        let o = ok(&[
            "hbase",
            "copy-snapshot",
            src_s,
            dest_s,
            "--snapshot",
            snap,
            "--threads",
            "2",
        ]);
        assert!(stdout(&o).contains(&format!("{dest_s}/.hbase-snapshot/{snap}")));
        let verified = |root: &str| stdout(&ok(&["hbase", "verify", root, "--snapshot", snap]));
        assert_eq!(
            verified(dest_s),
            verified(src_s).replace(src_s, dest_s),
            "{snap}"
        );
        let clones: Vec<String> = [src_s, dest_s]
            .iter()
            .enumerate()
            .map(|(i, root)| {
                let t = tmp.path().join(format!("clone-{snap}-{i}"));
                let t = t.to_str().unwrap();
                ok(&["table", "clone-hbase", root, "--snapshot", snap, t]);
                stdout(&ok(&["scan", t]))
            })
            .collect();
        assert_eq!(clones[0], clones[1], "{snap}");
    }
    // Only what the snapshots name: the copy's archive holds their files, nothing else.
    assert_eq!(unnamed_archive_files(&dest), Vec::<PathBuf>::new());
    let again = hfkit(&[
        "hbase",
        "copy-snapshot",
        src_s,
        dest_s,
        "--snapshot",
        "snap_t1",
    ]);
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
    // The snapshot deleted (its files stay archived): copied again, nothing copied.
    std::fs::remove_dir_all(dest.join(".hbase-snapshot/snap_t1")).unwrap();
    let o = ok(&[
        "hbase",
        "copy-snapshot",
        src_s,
        dest_s,
        "--snapshot",
        "snap_t1",
        "--json",
    ]);
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["files_present"], report["files"], "{report}");
    assert_eq!(report["bytes"], 0);

    // Killed while moving its copies into the archive: no snapshot; the next copy cleans up.
    let killed = tmp.path().join("killed");
    let killed_s = killed.to_str().unwrap();
    let copy = [
        "hbase",
        "copy-snapshot",
        src_s,
        killed_s,
        "--snapshot",
        "snap_t1",
    ];
    common::kill_export_when_paused(&copy, "moved:5");
    assert!(!killed.join(".hbase-snapshot/snap_t1").exists());
    ok(&[
        "hbase",
        "copy-snapshot",
        src_s,
        killed_s,
        "--snapshot",
        "snap_t2",
    ]);
    assert_eq!(unnamed_archive_files(&killed), Vec::<PathBuf>::new());
    ok(&copy);
    assert_eq!(unnamed_archive_files(&killed), Vec::<PathBuf>::new());
    let staging: Vec<_> = std::fs::read_dir(killed.join(".hbase-snapshot/.tmp"))
        .unwrap()
        .collect();
    assert!(staging.is_empty(), "{staging:?}");

    // 61,720 bytes at 0.01 MB/s: more than 6 s, and off a terminal a progress line after 5.
    let slow = tmp.path().join("slow");
    let started = std::time::Instant::now();
    let o = ok(&[
        "hbase",
        "copy-snapshot",
        src_s,
        slow.to_str().unwrap(),
        "--snapshot",
        "snap_t1",
        "--bandwidth",
        "0.01",
    ]);
    assert!(started.elapsed() >= std::time::Duration::from_secs(6));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.lines()
            .any(|l| l.starts_with("hfkit: hbase copy-snapshot: ") && l.contains("MB (")),
        "{err}"
    );
}
