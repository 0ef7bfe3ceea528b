//! Offline compaction of HBase tables in place (HBase's CompactionTool): archived inputs, kept
//! cells, killed commits finished, FILE-tracker stores, merged regions, the family's settings.

use super::*;

#[test]
fn offline_compaction_in_place_archives_the_inputs_and_keeps_the_cells() {
    let Some((dir, tmp, root)) =
        root_copy("offline_compaction_in_place_archives_the_inputs_and_keeps_the_cells")
    else {
        return;
    };
    let now = 1_700_000_400_000;
    let opts = CompactOptions {
        now_ms: now,
        ..Default::default()
    };
    let refused = |m: &Manifest| compact_in_place(m, &opts).unwrap_err().to_string();
    let hb = HBaseRoot::open(&root).unwrap();
    let t1 = hb.table("t1").unwrap();
    let before = t1.reader().unwrap();
    let (raw_before, user_before) = (raw_scan(&t1), read_all(&before, false, now));
    let t3_before = raw_scan(&hb.table("t3").unwrap());

    // What hfkit's own major compaction leaves, from a clone of the same table.
    let cloned = tmp.path().join("clone");
    hfkit::hbase::clone::clone_to_table(&t1, &cloned, None, now).unwrap();
    Table::open(&cloned)
        .unwrap()
        .compact(hfkit::table::compact::CompactOptions {
            major: true,
            now_ms: now,
            ..Default::default()
        })
        .unwrap();
    let want_raw = read_all(&table_reader(&cloned), true, now);

    // Refused while the layout says HBase may be using the table; nothing changes.
    let snapshot_of_root = walk(&root);
    let wal = root.join("WALs/rs1.example.com,16020,1700000000000");
    std::fs::create_dir_all(&wal).unwrap();
    std::fs::write(
        wal.join("rs1.example.com%2C16020%2C1700000000000.1700000000001"),
        b"x",
    )
    .unwrap();
    let err = refused(&t1);
    assert!(
        err.contains("WALs/rs1.example.com") && err.contains("write-ahead log"),
        "{err}"
    );
    std::fs::remove_dir_all(root.join("WALs")).unwrap();
    let edits = root.join("data/default/t1/669d6d57c514f503ce48c2c8f5fb2b7b/recovered.edits");
    std::fs::create_dir_all(&edits).unwrap();
    std::fs::write(edits.join("0000000000000000400"), b"x").unwrap();
    let err = refused(&t1);
    assert!(err.contains("recovered.edits/0000000000000000400"), "{err}");
    std::fs::remove_dir_all(&edits).unwrap();
    assert_eq!(walk(&root), snapshot_of_root, "refusals change nothing");

    // A split's daughters: each compacts its reference away (the half it reads of the
    // parent's file), the reference archived, the parent's file kept; reads are unchanged.
    let t2 = hb.table("ns1:t2").unwrap();
    let (t2_raw, t2_user) = (raw_scan(&t2), read_all(&t2.reader().unwrap(), false, now));
    let report = compact_in_place(&t2, &opts).unwrap();
    assert_eq!(report.stores.len(), 2, "the two daughters' stores");
    let t2_after = hb.table("ns1:t2").unwrap();
    assert!(t2_after
        .regions
        .iter()
        .filter(|r| r.live)
        .flat_map(|r| &r.families)
        .flat_map(|f| &f.files)
        .all(|f| f.reference.is_none()));
    assert_eq!(read_all(&t2_after.reader().unwrap(), false, now), t2_user);
    let t2_raw_after = raw_scan(&t2_after);
    assert!(
        t2_raw_after.iter().all(|l| t2_raw.contains(l)),
        "cells keep their sequence ids"
    );
    let reference = "cfca939b85130c57fc914135e3f5cb6f.65374ed9eca7cccfe7a1fb7c3de41505";
    for daughter in [
        "d5c0c080cbe170cd031cf1f7b4ffbf52",
        "8f23ef59531b58c9b20e08f067da3696",
    ] {
        let archived = root
            .join("archive/data/ns1/t2")
            .join(daughter)
            .join("f")
            .join(reference);
        assert!(archived.is_file(), "{}", archived.display());
    }
    assert!(root
        .join("data/ns1/t2/65374ed9eca7cccfe7a1fb7c3de41505/f/cfca939b85130c57fc914135e3f5cb6f")
        .is_file());
    let v = verify::verify(&hb.snapshot("snap_t2").unwrap());
    assert!(
        v.is_ok(),
        "the snapshot of the split still reads: {:?}",
        v.problems
    );

    // Compact.
    let report = compact_in_place(&t1, &opts).unwrap();
    assert_eq!(report.stores.len(), 6);
    let after = hb.table("t1").unwrap();
    let raw_after = raw_scan(&after);
    let strip = |l: &String| l.rsplit_once(' ').unwrap().0.to_string();
    assert_eq!(
        raw_after.iter().map(strip).collect::<Vec<_>>(),
        want_raw,
        "as a major compaction leaves them"
    );
    assert!(
        raw_after.iter().all(|l| raw_before.contains(l)),
        "cells keep their sequence ids"
    );
    assert!(raw_after.len() < raw_before.len());
    assert_eq!(
        read_all(&after.reader().unwrap(), false, now),
        user_before,
        "reads unchanged"
    );

    // One new file per store; the inputs, byte for byte, in the archive.
    for s in &report.stores {
        let store = root.join("data/default/t1").join(&s.region).join(&s.family);
        let names: Vec<String> = std::fs::read_dir(&store)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, [s.output.clone().unwrap()]);
        let r = HFileReader::open(store.join(&names[0])).unwrap();
        let fi = r.file_info();
        assert_eq!(fi.get_bool(keys::MAJOR_COMPACTION_KEY), Some(true));
        let event =
            CompactionEventTracker::decode(&fi.get(keys::COMPACTION_EVENT_KEY).unwrap()[4..])
                .unwrap();
        let mut compacted: Vec<String> = event
            .compacted_store_file
            .iter()
            .map(|n| String::from_utf8(n.clone()).unwrap())
            .collect();
        compacted.sort();
        let mut inputs = s.inputs.clone();
        inputs.sort();
        assert_eq!(compacted, inputs);
        for name in &s.inputs {
            let archived = root
                .join("archive/data/default/t1")
                .join(&s.region)
                .join(&s.family)
                .join(name);
            let original = dir
                .join("root1/data/default/t1")
                .join(&s.region)
                .join(&s.family)
                .join(name);
            assert_eq!(
                std::fs::read(&archived).unwrap(),
                std::fs::read(&original).unwrap()
            );
        }
        assert!(!root
            .join("data/default/t1")
            .join(&s.region)
            .join(".tmp")
            .exists());
    }

    // The snapshot and the clone t3 (links into t1) still read, now from the archive.
    let snap = hb.snapshot("snap_t1").unwrap();
    let v = verify::verify(&snap);
    assert!(v.is_ok(), "{:?}", v.problems);
    let (_, expected) = expected_verify(&dir, "snap_t1", &snap);
    assert_eq!(
        format!("total_cells={} sha256={}", v.total_cells, v.total_sha256),
        expected
    );
    assert_eq!(raw_scan(&hb.table("t3").unwrap()), t3_before);

    // Done: a second run finds every store major-compacted.
    let again = compact_in_place(&hb.table("t1").unwrap(), &opts).unwrap();
    assert!(again.stores.is_empty());

    // The CLI.
    let o = ok(&words(&format!(
        "hbase compact {} t3 --now 1700000400000",
        root.to_str().unwrap()
    )));
    assert!(
        stdout(&o).ends_with("6 store(s) compacted\n"),
        "{}",
        stdout(&o)
    );
    assert_eq!(
        raw_scan(&hb.table("t3").unwrap())
            .iter()
            .map(strip)
            .collect::<Vec<_>>(),
        want_raw
    );
    let o = hfkit(&["hbase", "compact", "--help"]);
    assert!(stdout(&o).contains("Examples ("));
}

/// What a killed `hbase compact` leaves: its half-written output under a region's
/// `.tmp/<family>/` (named `hfkit-compact-<32 hex>`, unlike HBase's 32-hex names) is removed by
/// the next compact, which proceeds; a file HBase left there still makes it refuse, naming it.
/// Killed between moving an output in and archiving the inputs, the store reads as compacted
/// (the output's compaction event names the inputs, as HBase's store opening honours) and the
/// next compact archives them.
#[test]
fn offline_compaction_removes_its_own_leftovers_and_finishes_a_killed_commit() {
    let Some((dir, _tmp, root)) =
        root_copy("offline_compaction_removes_its_own_leftovers_and_finishes_a_killed_commit")
    else {
        return;
    };
    let now = 1_700_000_400_000;
    let opts = CompactOptions {
        now_ms: now,
        ..Default::default()
    };
    let hb = HBaseRoot::open(&root).unwrap();
    let region = root.join("data/default/t1/43ae7364b4a555b93267937f9bc49ec1");
    let leftover = region
        .join(".tmp/cf1")
        .join("hfkit-compact-0000018a3f2b9c1d000012340000000a");
    std::fs::create_dir_all(leftover.parent().unwrap()).unwrap();
    std::fs::write(&leftover, b"half an HFile").unwrap();
    let report = compact_in_place(&hb.table("t1").unwrap(), &opts).unwrap();
    assert_eq!(report.stores.len(), 6);
    assert!(!region.join(".tmp").exists(), "the leftover is removed");
    let after = raw_scan(&hb.table("t1").unwrap());

    // HBase's own file under .tmp (a flush or compaction in progress): refused, named, kept,
    // and hfkit's leftover beside it is kept too (a refusal changes nothing).
    let hbase_file = region.join(".tmp/cf2/0123456789abcdef0123456789abcdef");
    std::fs::create_dir_all(hbase_file.parent().unwrap()).unwrap();
    std::fs::write(&hbase_file, b"x").unwrap();
    std::fs::create_dir_all(leftover.parent().unwrap()).unwrap();
    std::fs::write(&leftover, b"half an HFile").unwrap();
    let err = compact_in_place(&hb.table("t1").unwrap(), &opts)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&hbase_file.display().to_string()) && err.contains("refusing"),
        "{err}"
    );
    assert!(hbase_file.is_file() && leftover.is_file());
    std::fs::remove_dir_all(region.join(".tmp")).unwrap();

    // Killed after the output of 43ae.../cf1 moved in, before its inputs were archived: put
    // two inputs back.
    let s = &report.stores[0];
    assert_eq!(
        (s.region.as_str(), s.family.as_str()),
        ("43ae7364b4a555b93267937f9bc49ec1", "cf1")
    );
    let archive = root.join("archive/data/default/t1/43ae7364b4a555b93267937f9bc49ec1/cf1");
    for name in &s.inputs[..2] {
        std::fs::rename(archive.join(name), region.join("cf1").join(name)).unwrap();
    }
    assert_eq!(
        raw_scan(&hb.table("t1").unwrap()),
        after,
        "reads as compacted"
    );
    let again = compact_in_place(&hb.table("t1").unwrap(), &opts).unwrap();
    assert!(again.stores.is_empty(), "{:?}", again.stores);
    let names: Vec<String> = std::fs::read_dir(region.join("cf1"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, [s.output.clone().unwrap()], "inputs archived again");
    for name in &s.inputs {
        let original = dir
            .join("root1/data/default/t1/43ae7364b4a555b93267937f9bc49ec1/cf1")
            .join(name);
        if original.is_file() {
            assert_eq!(
                std::fs::read(archive.join(name)).unwrap(),
                std::fs::read(&original).unwrap()
            );
        }
    }
    assert_eq!(raw_scan(&hb.table("t1").unwrap()), after);
}

/// `hbase compact` of FILE-tracker stores (issue 41 item 3): each store's `.filelist` is
/// replaced by a new track file naming the output instead of the inputs (the older track files
/// deleted), the inputs archived (a reference the list alone holds has no file), reads
/// unchanged; an input a killed run committed away but left in the directory is archived by
/// the next run.
#[test]
fn offline_compaction_of_file_tracker_stores_replaces_their_lists() {
    let Some((_dir, _tmp, root)) =
        root_copy("offline_compaction_of_file_tracker_stores_replaces_their_lists")
    else {
        return;
    };
    let hb = HBaseRoot::open(&root).unwrap();
    // t1 and ns1:t2 on the FILE tracker, each store listing its files (t2's references in the
    // list only, their files removed, as the FILE tracker keeps them).
    for table in ["t1", "ns1:t2"] {
        common::use_file_tracker_listing(&root, table);
    }
    let now = 1_700_000_400_000;
    let opts = CompactOptions {
        now_ms: now,
        ..Default::default()
    };
    for (table, dir, stores) in [("t1", "data/default/t1", 6), ("ns1:t2", "data/ns1/t2", 2)] {
        let m = hb.table(table).unwrap();
        let user = read_all(&m.reader().unwrap(), false, now);
        let report = compact_in_place(&m, &opts).unwrap();
        assert_eq!(report.stores.len(), stores, "{table}");
        let after = hb.table(table).unwrap();
        assert_eq!(
            read_all(&after.reader().unwrap(), false, now),
            user,
            "{table}"
        );
        for s in &report.stores {
            let store = root.join(dir).join(&s.region).join(&s.family);
            let r = after
                .regions
                .iter()
                .find(|r| r.info.encoded_name() == s.region)
                .unwrap();
            let listed: Vec<&str> = r
                .families
                .iter()
                .filter(|f| f.family == s.family.as_bytes())
                .flat_map(|f| &f.files)
                .map(|f| f.name.as_str())
                .collect();
            assert_eq!(
                listed,
                [s.output.as_deref().unwrap()],
                "{table} {}",
                s.region
            );
            let tracks: Vec<String> = std::fs::read_dir(store.join(FILELIST_DIR))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            assert_eq!(tracks.len(), 1, "{tracks:?}");
            assert!(
                tracks[0].starts_with("f1.") && tracks[0] != "f1.1",
                "{tracks:?}"
            );
            for input in &s.inputs {
                assert!(!store.join(input).exists(), "{input} left in the store");
            }
        }
        assert!(compact_in_place(&hb.table(table).unwrap(), &opts)
            .unwrap()
            .stores
            .is_empty());
        let o = ok(&["hbase", "verify", root.to_str().unwrap(), table]);
        assert!(stdout(&o).contains("OK"), "{}", stdout(&o));
    }
    // A killed run's input, committed away but not archived: archived by the next run.
    let t1 = hb.table("t1").unwrap();
    let r = &t1.regions[0];
    let store = root
        .join("data/default/t1")
        .join(r.info.encoded_name())
        .join("cf1");
    let out = HFileReader::open(store.join(&r.families[0].files[0].name)).unwrap();
    let event = CompactionEventTracker::decode(
        &out.file_info().get(keys::COMPACTION_EVENT_KEY).unwrap()[4..],
    )
    .unwrap();
    let input = String::from_utf8(event.compacted_store_file[0].clone()).unwrap();
    let archived = root
        .join("archive/data/default/t1")
        .join(r.info.encoded_name())
        .join("cf1")
        .join(&input);
    std::fs::copy(&archived, store.join(&input)).unwrap();
    let report = compact_in_place(&hb.table("t1").unwrap(), &opts).unwrap();
    assert!(report.stores.is_empty());
    assert_eq!(
        report.compacted_archived,
        [format!("{}/cf1/{input}", r.info.encoded_name())]
    );
    assert!(!store.join(&input).exists());
}

/// `hbase compact` of a merged region (issue 41 item 3): t1's first two regions merged as
/// HBase's `HRegionFileSystem.mergeStoreFile` leaves them (a newer region `[, p)` whose
/// stores hold a top reference, at each parent's start key, to every file of both parents);
/// the parents are then covered, not read. The compaction reads the references as their
/// halves, writes one file per store, archives the references and leaves the parents' files;
/// reads are unchanged and the snapshot of the parents still verifies.
#[test]
fn offline_compaction_of_a_merged_region_compacts_its_references_away() {
    use hfkit::format::reader::HalfRange;
    use hfkit::hbase::{Reference, RegionInfo};
    let Some((_dir, _tmp, root)) =
        root_copy("offline_compaction_of_a_merged_region_compacts_its_references_away")
    else {
        return;
    };
    let hb = HBaseRoot::open(&root).unwrap();
    let now = 1_700_000_400_000;
    let t1 = hb.table("t1").unwrap();
    let user = read_all(&t1.reader().unwrap(), false, now);
    let parents: Vec<&hfkit::hbase::RegionManifest> = t1
        .live_regions()
        .into_iter()
        .filter(|r| r.info.end_key.as_slice() <= &b"p"[..] && !r.info.end_key.is_empty())
        .collect();
    assert_eq!(parents.len(), 2);
    let merged = RegionInfo {
        start_key: Vec::new(),
        end_key: b"p".to_vec(),
        region_id: parents[0].info.region_id + 1,
        ..parents[0].info.clone()
    };
    let table_dir = root.join("data/default/t1");
    let merged_dir = table_dir.join(merged.encoded_name());
    std::fs::create_dir_all(&merged_dir).unwrap();
    std::fs::write(merged_dir.join(".regioninfo"), merged.to_file_bytes()).unwrap();
    let mut references = Vec::new();
    for parent in &parents {
        let enc = parent.info.encoded_name();
        for ff in &parent.families {
            let family = String::from_utf8_lossy(&ff.family).into_owned();
            std::fs::create_dir_all(merged_dir.join(&family)).unwrap();
            for f in &ff.files {
                let name = format!("{}.{enc}", f.name);
                let r = Reference::at_row(&parent.info.start_key, HalfRange::Top);
                std::fs::write(merged_dir.join(&family).join(&name), r.to_file_bytes()).unwrap();
                references.push((family.clone(), name));
            }
        }
    }
    let m = hb.table("t1").unwrap();
    let live: Vec<String> = m
        .live_regions()
        .iter()
        .map(|r| r.info.encoded_name())
        .collect();
    assert!(
        live.contains(&merged.encoded_name()) && live.len() == 2,
        "{live:?}"
    );
    assert_eq!(
        read_all(&m.reader().unwrap(), false, now),
        user,
        "the merge reads as before"
    );
    let parent_files: Vec<PathBuf> = parents
        .iter()
        .flat_map(|p| walk(&table_dir.join(p.info.encoded_name())))
        .filter(|p| p.is_file())
        .collect();

    let opts = CompactOptions {
        now_ms: now,
        ..Default::default()
    };
    let report = compact_in_place(&m, &opts).unwrap();
    let merged_stores = report
        .stores
        .iter()
        .filter(|s| s.region == merged.encoded_name())
        .count();
    assert_eq!(merged_stores, 2, "cf1 and cf2 of the merged region");
    let after = hb.table("t1").unwrap();
    assert_eq!(
        read_all(&after.reader().unwrap(), false, now),
        user,
        "reads unchanged"
    );
    let r = after
        .regions
        .iter()
        .find(|r| r.info.encoded_name() == merged.encoded_name())
        .unwrap();
    assert!(r
        .families
        .iter()
        .all(|ff| ff.files.len() == 1 && ff.files[0].reference.is_none()));
    for (family, name) in &references {
        let archived = root
            .join("archive/data/default/t1")
            .join(merged.encoded_name())
            .join(family)
            .join(name);
        assert!(archived.is_file(), "{}", archived.display());
    }
    assert!(
        parent_files.iter().all(|p| p.is_file()),
        "the parents' files stay"
    );
    let v = verify::verify(&hb.snapshot("snap_t1").unwrap());
    assert!(v.is_ok(), "{:?}", v.problems);
}

/// `hbase compact` writes with the family's settings as HBase's compaction does
/// (`StoreFileTrackerBase.createFileContext` over the family's descriptor and configuration):
/// a Bloom error rate in the family's CONFIGURATION gives the outputs the hash count of that
/// rate, where the same compaction under the unchanged descriptor gives the default's.
#[test]
fn offline_compaction_writes_with_the_familys_configuration() {
    let Some((_dir, tmp, root)) =
        root_copy("offline_compaction_writes_with_the_familys_configuration")
    else {
        return;
    };
    let plain = tmp.path().join("plain");
    copy_tree(&root, &plain);
    let m = HBaseRoot::open(&root).unwrap().table("t1").unwrap();
    let mut d = m.descriptor.clone();
    for f in d.families.iter_mut() {
        f.configuration
            .push(("io.storefile.bloom.error.rate".into(), "0.0001".into()));
    }
    let bytes = d.to_file_bytes();
    let Source::Table { dir } = &m.source else {
        panic!()
    };
    std::fs::write(
        dir.join(TABLEINFO_DIR).join(tableinfo_file_name(2, &bytes)),
        bytes,
    )
    .unwrap();
    let hash_counts = |root: &Path| -> Vec<u32> {
        let m = HBaseRoot::open(root).unwrap().table("t1").unwrap();
        let opts = CompactOptions {
            now_ms: 1_700_000_400_000,
            ..Default::default()
        };
        let report = compact_in_place(&m, &opts).unwrap();
        let mut counts = Vec::new();
        for s in &report.stores {
            let Some(out) = &s.output else { continue };
            let f = root
                .join("data/default/t1")
                .join(&s.region)
                .join(&s.family)
                .join(out);
            let r = HFileReader::open(&f).unwrap();
            let bloom = r.general_bloom().expect("a Bloom filter");
            counts.push(bloom.meta().hash_count);
        }
        counts
    };
    let (set, default) = (hash_counts(&root), hash_counts(&plain));
    assert_eq!(set.len(), 6);
    assert_eq!(default.len(), 6);
    for (s, d) in set.iter().zip(&default) {
        assert!(s > d, "hash counts {set:?}, by default {default:?}");
    }
}
