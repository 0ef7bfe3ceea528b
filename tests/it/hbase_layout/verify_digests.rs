//! `hbase::verify`: references' split keys against the daughters' bounds, the FILE tracker's
//! unknown sizes, and digests that are a function of the cells only.

use super::*;

#[test]
fn reference_split_keys_must_match_the_daughter_bounds() {
    use hfkit::format::reader::HalfRange;
    use hfkit::hbase::Reference;
    let Some((_, _tmp, root)) = root_copy("reference_split_keys_must_match_the_daughter_bounds")
    else {
        return;
    };
    let hb = HBaseRoot::open(&root).unwrap();
    let t2 = root.join("data/ns1/t2");
    let name = "cfca939b85130c57fc914135e3f5cb6f.65374ed9eca7cccfe7a1fb7c3de41505";
    // (daughter, its half, a split row that is not its bound, the bound, which bound).
    let cases = [
        (
            "8f23ef59531b58c9b20e08f067da3696",
            HalfRange::Top,
            "r05",
            "r10",
            "region's start",
        ),
        (
            "d5c0c080cbe170cd031cf1f7b4ffbf52",
            HalfRange::Bottom,
            "r15",
            "r10",
            "region's end",
        ),
    ];
    for (daughter, range, row, bound, which) in cases {
        let file = t2.join(daughter).join("f").join(name);
        let good = std::fs::read(&file).unwrap();
        std::fs::write(
            &file,
            Reference::at_row(row.as_bytes(), range).to_file_bytes(),
        )
        .unwrap();
        let m = hb.table("ns1:t2").unwrap();
        let Err(err) = m.reader() else {
            panic!("{daughter}: a reference split at {row} was read");
        };
        let err = err.to_string();
        let half = if range == HalfRange::Top {
            "top"
        } else {
            "bottom"
        };
        assert!(
            err.contains(&file.display().to_string())
                && err.contains(&format!(
                    "{half} reference split at '{row}', but the {which} key is '{bound}'"
                )),
            "{err}"
        );
        let report = verify::verify(&m);
        assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
        assert!(report.problems[0].contains(name), "{:?}", report.problems);
        std::fs::write(&file, good).unwrap();
    }
    assert!(verify::verify(&hb.table("ns1:t2").unwrap()).is_ok());
}

/// HBase's FILE tracker records `StoreFileInfo.getSize()`, which is 0 for references and links
/// (only an HFile's own status gives it a length): `hbase verify` must not take that 0 for the
/// size of the file they resolve to, and still compares every other recorded size.
#[test]
fn verify_takes_the_file_trackers_zero_sizes_of_references_and_links_as_unknown() {
    let Some((_, _tmp, root)) =
        root_copy("verify_takes_the_file_trackers_zero_sizes_of_references_and_links_as_unknown")
    else {
        return;
    };
    let hb = HBaseRoot::open(&root).unwrap();
    // Each store's list as HBase writes it: HFiles with their length, the rest with 0.
    let track = |table: &str| {
        let m = hb.table(table).unwrap();
        let Source::Table { dir } = &m.source else {
            panic!()
        };
        use_file_tracker(&root, table);
        for r in &m.regions {
            for ff in &r.families {
                let store = dir
                    .join(r.info.encoded_name())
                    .join(String::from_utf8_lossy(&ff.family).as_ref());
                let entries: Vec<_> = ff
                    .files
                    .iter()
                    .map(|f| {
                        let plain = hfkit::hbase::names::is_hfile_name(&f.name);
                        let size = if plain {
                            std::fs::metadata(store.join(&f.name)).unwrap().len()
                        } else {
                            0
                        };
                        (f.name.as_str(), f.reference.clone(), size)
                    })
                    .collect();
                write_filelist_sized(&store, "f1.1", 1, &entries);
            }
        }
        dir.clone()
    };
    // ns1:t2: split daughters (references) and their parent (an HFile); t3: a clone (links).
    let t2 = track("ns1:t2");
    track("t3");
    for table in ["ns1:t2", "t3"] {
        let m = hb.table(table).unwrap();
        let listed: usize = m
            .regions
            .iter()
            .flat_map(|r| &r.families)
            .map(|ff| ff.files.len())
            .sum();
        assert!(listed > 0, "{table}: the lists are read");
        let report = verify::verify(&m);
        assert!(report.is_ok(), "{table}: {:?}", report.problems);
    }

    // A plain HFile's size is still compared: the parent's entry says 1 byte.
    let parent = t2.join("65374ed9eca7cccfe7a1fb7c3de41505/f");
    write_filelist_sized(
        &parent,
        "f1.2",
        2,
        &[("cfca939b85130c57fc914135e3f5cb6f", None, 1)],
    );
    let report = verify::verify(&hb.table("ns1:t2").unwrap());
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    assert!(
        report.problems[0].contains("the manifest says 1 for cfca939b85130c57fc914135e3f5cb6f"),
        "{:?}",
        report.problems
    );
}

/// (family, cells, sha256) of the stores of `m`'s live regions, in the report's order.
fn live_store_digests(m: &Manifest, report: &verify::VerifyReport) -> Vec<(String, u64, String)> {
    report
        .stores
        .iter()
        .filter(|s| {
            m.regions
                .iter()
                .any(|r| r.live && r.info.encoded_name() == s.region)
        })
        .map(|s| (s.family.clone(), s.cells, s.sha256.clone()))
        .collect()
}

/// Rewrites the HFile at `path` with hfkit's writer (other bytes than HBase's), its cells as
/// read, the value of the cell at `change` (if any) with its first byte flipped.
fn rewrite_hfile(path: &Path, change: Option<usize>) {
    use hfkit::format::writer::{HFileWriter, WriterOptions};
    let r = HFileReader::open(path).unwrap();
    let mut s = r.scanner().unwrap();
    let mut cells = Vec::new();
    while let Some(c) = s.next().unwrap() {
        cells.push(c.to_owned());
    }
    if let Some(i) = change {
        cells[i].value[0] ^= 1;
    }
    let opts = WriterOptions {
        include_tags: true,
        include_mvcc: true,
        ..WriterOptions::default()
    };
    let mut w = HFileWriter::new(Vec::new(), opts).unwrap();
    for c in &cells {
        w.append(&c.as_ref()).unwrap();
    }
    let (bytes, _) = w.finish().unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// `hbase verify`'s digests depend on the cells only: a snapshot, its clone into an hfkit table
/// exported back as an HBase snapshot into another root (other file names, regions, sequence
/// ids, reference halves rewritten, the split parent gone), and the table it was taken of give
/// one digest; one changed value gives another, a file rewritten with the same cells the same.
#[test]
fn verify_digests_are_a_function_of_the_cells() {
    let Some((_, tmp, root)) = root_copy("verify_digests_are_a_function_of_the_cells") else {
        return;
    };
    let now = 1_700_000_400_000;
    let hb = HBaseRoot::open(&root).unwrap();
    let other = tmp.path().join("other");
    for name in ["snap_t1", "snap_t2"] {
        let m = hb.snapshot(name).unwrap();
        let src = verify::verify(&m);
        assert!(src.is_ok(), "{name}: {:?}", src.problems);
        let table = tmp.path().join(format!("{name}-clone"));
        clone_to_table(&m, &table, None, now).unwrap();
        let opts = ExportOptions {
            name: format!("{name}_copy"),
            from_snapshot: None,
            table: None,
            creation_time: now,
        };
        export_snapshot(&Table::open(&table).unwrap(), &other, &opts).unwrap();
        let copy_m = HBaseRoot::open(&other)
            .unwrap()
            .snapshot(&opts.name)
            .unwrap();
        let copy = verify::verify(&copy_m);
        assert!(copy.is_ok(), "{name}: {:?}", copy.problems);
        assert_eq!(
            (copy.total_cells, &copy.total_sha256),
            (src.total_cells, &src.total_sha256),
            "{name} and its copy"
        );
        assert_eq!(
            live_store_digests(&copy_m, &copy),
            live_store_digests(&m, &src),
            "{name}: per store"
        );
    }
    let t2 = verify::verify(&hb.table("ns1:t2").unwrap());
    let snap_t2 = verify::verify(&hb.snapshot("snap_t2").unwrap());
    assert_eq!(t2.total_sha256, snap_t2.total_sha256, "ns1:t2 and snap_t2");

    // The parent HFile both daughters read: the same cells in other bytes, then one changed.
    let parent = root
        .join("data/ns1/t2/65374ed9eca7cccfe7a1fb7c3de41505/f/cfca939b85130c57fc914135e3f5cb6f");
    let original = std::fs::read(&parent).unwrap();
    rewrite_hfile(&parent, None);
    assert_ne!(std::fs::read(&parent).unwrap(), original);
    let same = verify::verify(&hb.table("ns1:t2").unwrap());
    assert!(same.is_ok(), "{:?}", same.problems);
    assert_eq!(
        same.total_sha256, t2.total_sha256,
        "same cells, other bytes"
    );
    std::fs::write(&parent, &original).unwrap();
    rewrite_hfile(&parent, Some(3));
    let changed = verify::verify(&hb.table("ns1:t2").unwrap());
    assert!(changed.is_ok(), "{:?}", changed.problems);
    assert_eq!(changed.total_cells, t2.total_cells);
    assert_ne!(changed.total_sha256, t2.total_sha256, "one value changed");
}
