//! Offline maintenance: compaction equivalence and crash safety, alter, snapshots (isolation,
//! restore under crashes, clone) and export round trips.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hfkit::format::cell::{compare_cells, Cell, CellType, CellTypeOwned};
use hfkit::format::compression::Compression;
use hfkit::format::encoding::DataBlockEncoding;
use hfkit::format::fileinfo::keys;
use hfkit::format::reader::HFileReader;
use hfkit::format::text::cell_line;
use hfkit::format::writer::{HFileWriter, WriterOptions};
use hfkit::read::{self, ReadOptions};
use hfkit::table::compact::{open_region_stores, CompactOptions, CompactionPolicy, FamilyChanges};
use hfkit::table::directory::Table;
use hfkit::table::export::ExportScope;
use hfkit::table::fsops::FaultFs;
use hfkit::table::manifest::{FamilyEntry, Manifest};
use hfkit::table::{BloomFilterKind, KeepDeletedCells};

use common::{tmpdir, Rng};

mod exports;
mod snapshots;

/// What a user sees: every region scanned with the read path, all versions the families
/// allow, at `now_ms`. `raw` returns markers and masked cells too.
fn scan_manifest(t: &Table, m: &Manifest, now_ms: i64, raw: bool) -> Vec<String> {
    let mut out = Vec::new();
    for r in &m.regions {
        let stores = open_region_stores(t, m, &r.id).unwrap();
        let opts = ReadOptions {
            max_versions: u32::MAX,
            now_ms,
            raw,
            ..ReadOptions::default()
        };
        for row in read::scan(&stores, &opts).unwrap() {
            for c in row.unwrap().cells {
                out.push(cell_line(&c.as_ref(), false));
            }
        }
    }
    out
}

fn scan_live(t: &Table, now_ms: i64) -> Vec<String> {
    scan_manifest(t, &t.manifest().unwrap(), now_ms, false)
}

/// Asserts equal cell lists, showing only the differences.
fn same(after: &[String], before: &[String], what: &str) {
    if after != before {
        let a: std::collections::BTreeSet<_> = after.iter().collect();
        let b: std::collections::BTreeSet<_> = before.iter().collect();
        panic!(
            "{what}: appeared {:?}, vanished {:?}",
            a.difference(&b).collect::<Vec<_>>(),
            b.difference(&a).collect::<Vec<_>>()
        );
    }
}

/// A random cell of `family`. `version_deletes`: may produce Delete / DeleteFamilyVersion.
fn random_cell(rng: &mut Rng, family: &str, version_deletes: bool) -> Cell {
    let row = format!("r{:02}", rng.below(30));
    let quals = ["", "q1", "q2", "q3"];
    let ts = 1000 * (1 + rng.below(30) as i64);
    let t = match rng.below(20) {
        0 if version_deletes => CellType::Delete,
        1 => CellType::DeleteColumn,
        2 => CellType::DeleteFamily,
        3 if version_deletes => CellType::DeleteFamilyVersion,
        _ => CellType::Put,
    };
    let q = if t.is_delete_family_kind() {
        ""
    } else {
        quals[rng.below(4) as usize]
    };
    let value = if t == CellType::Put {
        format!("v{}", rng.below(1000))
    } else {
        String::new()
    };
    Cell {
        cell_type: CellTypeOwned(t),
        ..Cell::put(
            row.as_bytes(),
            family.as_bytes(),
            q.as_bytes(),
            ts,
            value.as_bytes(),
        )
    }
}

fn write_file(path: &Path, mut cells: Vec<Cell>) {
    cells.sort_by(|a, b| compare_cells(&a.as_ref(), &b.as_ref()));
    cells.dedup_by(|a, b| compare_cells(&a.as_ref(), &b.as_ref()).is_eq());
    let mut w = HFileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    for c in &cells {
        w.append(&c.as_ref()).unwrap();
    }
    std::fs::write(path, w.finish().unwrap().0).unwrap();
}

/// A bulk-load directory with 1–2 random files per family.
fn random_bulk(root: &Path, rng: &mut Rng, families: &[FamilyEntry], tag: &str) -> PathBuf {
    let d = root.join(format!("bulk-{tag}"));
    for f in families {
        let fd = d.join(&f.name);
        std::fs::create_dir_all(&fd).unwrap();
        let version_deletes = f.keep_deleted_cells == "FALSE";
        for i in 0..1 + rng.below(2) {
            let n = 5 + rng.below(60);
            let cells = (0..n)
                .map(|_| random_cell(rng, &f.name, version_deletes))
                .collect();
            write_file(&fd.join(format!("h{i}")), cells);
        }
    }
    d
}

fn family(
    name: &str,
    versions: u32,
    min_versions: u32,
    ttl: Option<u64>,
    kdc: &str,
) -> FamilyEntry {
    FamilyEntry {
        versions,
        min_versions,
        ttl_seconds: ttl,
        keep_deleted_cells: kdc.into(),
        ..FamilyEntry::new(name)
    }
}

/// A random table with `attaches` loads over three regions.
fn random_table(root: &Path, seed: u64, attaches: usize) -> (Table, Vec<FamilyEntry>) {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let kdcs = ["FALSE", "TRUE", "TTL"];
    let mut families = Vec::new();
    for name in ["a", "b"] {
        let versions = 1 + rng.below(3) as u32;
        let min_versions = rng.below(versions as u64 + 1) as u32;
        let ttl = (rng.below(2) == 0).then_some(15);
        let kdc = kdcs[rng.below(3) as usize];
        families.push(family(name, versions, min_versions, ttl, kdc));
    }
    let t = Table::create(
        &root.join("t"),
        "default:t",
        families.clone(),
        &[b"r10".to_vec(), b"r20".to_vec()],
    )
    .unwrap();
    for i in 0..attaches {
        let bulk = random_bulk(root, &mut rng, &families, &format!("{seed}-{i}"));
        t.attach(&bulk).unwrap();
    }
    (t, families)
}

/// Now: timestamps run from 1 s to 30 s; a 15 s TTL expires about half of them.
const NOW: i64 = 32_000;

fn small_files_policy() -> CompactionPolicy {
    CompactionPolicy {
        min_compact_size: 0,
        ..CompactionPolicy::default()
    }
}

#[test]
fn compaction_never_changes_what_a_read_returns() {
    let mut subset_minors = 0;
    for seed in 1..=12u64 {
        let tmp = tmpdir();
        let (t, families) = random_table(tmp.path(), seed, 4 + (seed % 3) as usize);
        let before = scan_live(&t, NOW);
        let ctx = format!("seed {seed}: {families:?}");

        // Minor with the ratio policy on small files: usually a subset (RETAIN_DELETES).
        let r = t
            .compact(CompactOptions {
                now_ms: NOW,
                policy: small_files_policy(),
                ..CompactOptions::default()
            })
            .unwrap();
        subset_minors += r.stores.iter().filter(|s| !s.all_files).count();
        same(
            &scan_live(&t, NOW),
            &before,
            &format!("minor (ratio) {ctx}"),
        );
        assert!(t.check().unwrap().is_ok());

        // Another load, then a minor over every file (DROP_DELETES).
        let mut rng = Rng(seed + 100);
        t.attach(&random_bulk(tmp.path(), &mut rng, &families, "extra"))
            .unwrap();
        let before = scan_live(&t, NOW);
        t.compact(CompactOptions {
            now_ms: NOW,
            all_files: true,
            ..CompactOptions::default()
        })
        .unwrap();
        same(
            &scan_live(&t, NOW),
            &before,
            &format!("minor (all files) {ctx}"),
        );

        t.attach(&random_bulk(tmp.path(), &mut rng, &families, "extra2"))
            .unwrap();
        let before = scan_live(&t, NOW);
        let r = t
            .compact(CompactOptions {
                major: true,
                now_ms: NOW,
                ..CompactOptions::default()
            })
            .unwrap();
        same(&scan_live(&t, NOW), &before, &format!("major {ctx}"));
        let check = t.check().unwrap();
        assert!(check.is_ok() && check.orphans.is_empty(), "{check:?}");

        // One file per store; no marker (KEEP_DELETED_CELLS FALSE) and no excess version.
        let m = t.manifest().unwrap();
        for s in &r.stores {
            assert!(s.all_files);
            let n = m
                .files
                .iter()
                .filter(|e| e.region == s.region && e.family == s.family)
                .count();
            assert!(n <= 1, "{ctx}");
        }
        for f in &families {
            for reg in &m.regions {
                for e in m
                    .files
                    .iter()
                    .filter(|e| e.family == f.name && e.region == reg.id)
                {
                    let rd = HFileReader::open(t.file_path(e)).unwrap();
                    assert_eq!(
                        rd.file_info().get_bool(keys::MAJOR_COMPACTION_KEY),
                        Some(true)
                    );
                    assert_eq!(
                        rd.file_info().get_i64(keys::MAX_SEQ_ID_KEY),
                        Some(e.seq_id as i64)
                    );
                    let mut sc = rd.scanner().unwrap();
                    let mut col: Option<(Vec<u8>, Vec<u8>)> = None;
                    let mut puts = 0;
                    while let Some(c) = sc.next().unwrap() {
                        if f.keep_deleted_cells == "FALSE" {
                            assert!(!c.cell_type.is_delete(), "{ctx}: marker {c:?}");
                        }
                        if f.min_versions == 0 && f.ttl_seconds.is_some() {
                            assert!(c.timestamp >= NOW - 15_000, "{ctx}: expired {c:?}");
                        }
                        let key = (c.row.to_vec(), c.qualifier.to_vec());
                        if col.as_ref() != Some(&key) {
                            col = Some(key);
                            puts = 0;
                        }
                        if c.cell_type == CellType::Put {
                            puts += 1;
                            assert!(puts <= f.versions, "{ctx}: excess version {c:?}");
                        }
                    }
                }
            }
        }
    }
    assert!(subset_minors >= 2, "only {subset_minors} subset minors");
}

#[test]
fn minor_compaction_of_a_subset_keeps_markers_and_seq_ids() {
    let tmp = tmpdir();
    let f = family("f", 1, 0, None, "FALSE");
    let t = Table::create(&tmp.path().join("t"), "default:t", vec![f], &[]).unwrap();
    // One big old file, then three small ones: the ratio leaves the big one out.
    let mk = |tag: &str, cells: Vec<Cell>| {
        let d = tmp.path().join(tag);
        std::fs::create_dir_all(d.join("f")).unwrap();
        write_file(&d.join("f").join("x"), cells);
        t.attach(&d).unwrap();
    };
    mk(
        "big",
        (0..2000)
            .map(|i| Cell::put(format!("r{i:05}").as_bytes(), b"f", b"q", 10, b"old"))
            .collect(),
    );
    mk(
        "del",
        vec![Cell {
            cell_type: CellTypeOwned(CellType::DeleteColumn),
            ..Cell::put(b"r00001", b"f", b"q", 10, b"")
        }],
    );
    mk("p1", vec![Cell::put(b"r00002", b"f", b"q", 20, b"new")]);
    mk("p2", vec![Cell::put(b"r00003", b"f", b"q", 20, b"new")]);
    let before = scan_live(&t, 0);
    let r = t
        .compact(CompactOptions {
            policy: small_files_policy(),
            ..CompactOptions::default()
        })
        .unwrap();
    assert_eq!(r.stores.len(), 1);
    let s = &r.stores[0];
    assert_eq!(s.inputs.len(), 3, "{s:?}");
    assert!(!s.all_files);
    assert_eq!(s.output_markers, 1, "the marker is kept for the older file");
    let out = s.output.as_ref().unwrap();
    assert_eq!(out.seq_id, 4, "max of the inputs");
    let rd = HFileReader::open(t.file_path(out)).unwrap();
    assert_eq!(
        rd.file_info().get_bool(keys::MAJOR_COMPACTION_KEY),
        Some(false)
    );
    assert_eq!(rd.file_info().get_i64(keys::MAX_SEQ_ID_KEY), Some(4));
    assert_eq!(scan_live(&t, 0), before);
    assert_eq!(t.manifest().unwrap().files.len(), 2);
    // Nothing left to select (two files < min 3).
    let r = t
        .compact(CompactOptions {
            policy: small_files_policy(),
            ..CompactOptions::default()
        })
        .unwrap();
    assert_eq!(r.version, None);
}

#[test]
fn keep_deleted_cells_true_counts_deleted_versions_as_hbase_does() {
    // Documented divergence (formats/table.md §Compaction): with KEEP_DELETED_CELLS, deleted
    // Puts count toward VERSIONS in a major compaction, so an older version a read showed
    // behind a Delete of the newer one is dropped.
    let tmp = tmpdir();
    let t = Table::create(
        &tmp.path().join("t"),
        "default:t",
        vec![family("f", 1, 0, None, "TRUE")],
        &[],
    )
    .unwrap();
    let d = tmp.path().join("b");
    std::fs::create_dir_all(d.join("f")).unwrap();
    write_file(
        &d.join("f").join("x"),
        vec![
            Cell::put(b"r", b"f", b"q", 10, b"new"),
            Cell {
                cell_type: CellTypeOwned(CellType::Delete),
                ..Cell::put(b"r", b"f", b"q", 10, b"")
            },
            Cell::put(b"r", b"f", b"q", 5, b"old"),
        ],
    );
    t.attach(&d).unwrap();
    assert_eq!(scan_live(&t, 0).len(), 1, "the read shows the ts 5 version");
    t.compact(CompactOptions {
        major: true,
        ..CompactOptions::default()
    })
    .unwrap();
    assert_eq!(scan_live(&t, 0).len(), 0);
    let raw = common::live_file_cells(&t);
    assert_eq!(raw.len(), 2, "the marker and the deleted Put stay: {raw:?}");
}

#[test]
fn a_crash_at_every_step_of_a_compaction_leaves_before_or_after() {
    let tmp = tmpdir();
    let (t, _) = random_table(tmp.path(), 7, 3);
    let base = t.dir().to_path_buf();
    let visible = scan_live(&t, NOW);
    let before = common::live_file_cells(&t);
    let after = {
        let d = tmp.path().join("clean");
        common::copy_dir(&base, &d);
        let c = Table::open(&d).unwrap();
        c.compact(CompactOptions {
            major: true,
            now_ms: NOW,
            ..CompactOptions::default()
        })
        .unwrap();
        common::live_file_cells(&c)
    };
    assert_ne!(before, after);
    let mut points = 0;
    for fail_at in 0.. {
        let d = tmp.path().join(format!("crash{fail_at}"));
        common::copy_dir(&base, &d);
        let fs = Arc::new(FaultFs::new(fail_at));
        let result = Table::open(&d)
            .unwrap()
            .with_fs(fs)
            .compact(CompactOptions {
                major: true,
                now_ms: NOW,
                ..CompactOptions::default()
            });
        let t = Table::open(&d).unwrap();
        let check = t.check().unwrap();
        assert!(check.is_ok(), "fault {fail_at}: {check:?}");
        let now = common::live_file_cells(&t);
        assert_eq!(scan_live(&t, NOW), visible, "fault {fail_at}");
        let done = result.is_ok();
        if done {
            assert_eq!(now, after);
        } else {
            assert!(now == before || now == after, "fault {fail_at}: a mix");
            points += 1;
        }
        // The next writer removes the leftovers.
        clean_up_as_the_next_writer(&t, fail_at);
        std::fs::remove_dir_all(&d).unwrap();
        if done {
            break;
        }
    }
    eprintln!("injected a crash at each of {points} compaction steps");
    assert!(points >= 8, "only {points} crash points");
}

/// What the next writer does after a crash: collect the leftovers; then the table checks
/// clean, with no orphan files.
fn clean_up_as_the_next_writer(t: &Table, fail_at: u64) {
    let lock = t.lock().unwrap();
    t.collect_garbage(&lock).unwrap();
    drop(lock);
    let check = t.check().unwrap();
    assert!(
        check.is_ok() && check.orphans.is_empty(),
        "fault {fail_at}: {check:?}"
    );
}

#[test]
fn alter_changes_settings_for_later_writes() {
    let tmp = tmpdir();
    let (t, _) = random_table(tmp.path(), 3, 2);
    let before = t.manifest().unwrap();
    let f = t
        .alter(
            "a",
            &FamilyChanges {
                compression: Some(Compression::Gz),
                data_block_encoding: Some(DataBlockEncoding::FastDiff),
                bloom_filter: Some(BloomFilterKind::RowCol),
                block_size: Some(4096),
                versions: Some(3),
                min_versions: Some(0),
                ttl_seconds: Some(None),
                keep_deleted_cells: Some(KeepDeletedCells::False),
                compress_tags: Some(false),
                configuration: vec![
                    ("io.storefile.bloom.error.rate".into(), Some("0.001".into())),
                    ("custom.key".into(), Some("kept".into())),
                ],
            },
        )
        .unwrap();
    assert_eq!(f.compression, "GZ");
    assert!(!f.compress_tags);
    assert_eq!(
        f.other
            .configuration
            .get("io.storefile.bloom.error.rate")
            .map(String::as_str),
        Some("0.001")
    );
    assert_eq!(
        f.other.configuration.get("custom.key").map(String::as_str),
        Some("kept")
    );
    let m = t.manifest().unwrap();
    assert_eq!(m.version, before.version + 1);
    assert_eq!(m.files, before.files);
    let visible = scan_live(&t, NOW);
    t.compact(CompactOptions {
        major: true,
        now_ms: NOW,
        family: Some("a".into()),
        ..CompactOptions::default()
    })
    .unwrap();
    assert_eq!(scan_live(&t, NOW), visible);
    let m = t.manifest().unwrap();
    for e in m.files.iter().filter(|e| e.family == "a") {
        let r = HFileReader::open(t.file_path(e)).unwrap();
        assert_eq!(r.compression().name(), "GZ");
        assert_eq!(r.encoding().name(), "FAST_DIFF");
        assert_eq!(
            r.file_info().get_str(keys::BLOOM_FILTER_TYPE),
            Some("ROWCOL")
        );
    }
    // Invalid changes are refused and publish nothing.
    let v = t.manifest().unwrap().version;
    for bad in [
        FamilyChanges {
            versions: Some(0),
            ..FamilyChanges::default()
        },
        FamilyChanges {
            min_versions: Some(9),
            ..FamilyChanges::default()
        },
        // HBase knows LZO; hfkit cannot write it.
        FamilyChanges {
            compression: Some(Compression::Lzo),
            ..FamilyChanges::default()
        },
        // A writer setting out of its range.
        FamilyChanges {
            configuration: vec![("io.storefile.bloom.error.rate".into(), Some("2".into()))],
            ..FamilyChanges::default()
        },
    ] {
        assert!(t.alter("a", &bad).is_err(), "{bad:?}");
    }
    assert!(t.alter("zz", &FamilyChanges::default()).is_err());
    assert_eq!(t.manifest().unwrap().version, v);
}

fn major(t: &Table) {
    t.compact(CompactOptions {
        major: true,
        now_ms: NOW,
        ..CompactOptions::default()
    })
    .unwrap();
}

#[test]
fn cli_maintenance_commands() {
    let tmp = tmpdir();
    let (t, _) = random_table(tmp.path(), 31, 4);
    let dir = t.dir().display().to_string();
    let p = |s: &str| tmp.path().join(s).display().to_string();
    let run = |args: &[&str]| {
        let mut v = vec!["hfkit"];
        v.extend_from_slice(args);
        hfkit::cli::run(v)
    };
    let visible = scan_live(&t, NOW);
    assert_eq!(run(&["snapshot", "create", &dir, "s1"]), 0);
    assert_eq!(run(&["snapshot", "list", &dir, "--json"]), 0);
    assert_eq!(run(&["compact", &dir, "--now-ms", "32000"]), 0);
    assert_eq!(
        run(&["compact", &dir, "--major", "--family", "a", "--now-ms", "32000", "--json"]),
        0
    );
    assert_eq!(run(&["compact", &dir, "--region", "nope"]), 1);
    assert_eq!(scan_live(&t, NOW), visible);
    assert_eq!(
        run(&[
            "table",
            "alter",
            &dir,
            "--family",
            "b",
            "--compression",
            "zstd",
            "--ttl",
            "FOREVER",
            "--keep-deleted-cells",
            "false",
            "--versions",
            "3"
        ]),
        0
    );
    assert_eq!(
        run(&["table", "alter", &dir, "--family", "b", "--ttl", "soon"]),
        2
    );
    let alter_b =
        |flag: &str, value: &str| run(&["table", "alter", &dir, "--family", "b", flag, value]);
    // Names are checked by the CLI (usage errors), into the types the table takes.
    for [flag, bad] in [
        ["--compression", "nope"],
        ["--encoding", "zip"],
        ["--bloom", "rowprefix"],
        ["--keep-deleted-cells", "maybe"],
    ] {
        assert_eq!(alter_b(flag, bad), 2, "{flag} {bad}");
    }
    // The CLI's short Bloom form is stored in HBase's form, the length where HBase keeps it.
    assert_eq!(alter_b("--bloom", "rowprefix:4"), 0);
    let m = t.manifest().unwrap();
    let b = m.families.iter().find(|f| f.name == "b").unwrap();
    assert_eq!(b.bloom_filter, "ROWPREFIX_FIXED_LENGTH:4");
    assert_eq!(
        b.other
            .configuration
            .get("RowPrefixBloomFilter.prefix_length")
            .map(String::as_str),
        Some("4")
    );
    // `hfkit alter` stays as a hidden alias.
    assert_eq!(run(&["alter", &dir, "--family", "b", "--versions", "3"]), 0);
    let b = t.manifest().unwrap();
    let b = b.families.iter().find(|f| f.name == "b").unwrap();
    assert_eq!((b.versions, b.compression.as_str()), (3, "ZSTD"));
    assert_eq!(
        run(&[
            "export",
            &dir,
            "--format",
            "csv",
            "--to",
            &p("c.csv"),
            "--now-ms",
            "32000"
        ]),
        0
    );
    assert_eq!(
        run(&[
            "export",
            &dir,
            "--snapshot",
            "s1",
            "--format",
            "parquet",
            "--to",
            &p("c.pq")
        ]),
        0
    );
    assert_eq!(run(&["export", &dir, "--bulkload", &p("bulk")]), 0);
    assert_eq!(run(&["export", &dir, "--to", &p("copy")]), 0);
    assert_eq!(run(&["export", &dir]), 2);
    assert_eq!(
        run(&[
            "snapshot",
            "clone",
            &dir,
            "s1",
            &p("clone"),
            "--name",
            "default:c"
        ]),
        0
    );
    assert_eq!(run(&["snapshot", "restore", &dir, "s1"]), 0);
    assert_eq!(run(&["snapshot", "delete", &dir, "s1"]), 0);
    assert_eq!(run(&["snapshot", "delete", &dir, "s1"]), 1);
    assert!(t.check().unwrap().is_ok());
}

/// A major compaction leaves a store of one file that a major compaction wrote under the
/// family's current settings, with no cell past its TTL, as it is (HBase's policy skips a
/// single major-compacted file within its TTL): a second `compact --major` commits nothing.
/// A store is compacted again once its family's settings change (VERSIONS here), once a cell
/// is past the TTL ("now" moved on), and always when its file holds tags (per-cell TTLs).
#[test]
fn major_compaction_leaves_a_settled_store_alone() {
    const SEEDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/seeds");
    let dir = tmpdir();
    let run = |args: &[&str]| {
        let o = common::hfkit(args);
        assert!(o.status.success(), "{args:?}: {}", common::text(&o.stderr));
        common::text(&o.stdout)
    };
    // The stores compacted by `compact --major --json` (region/family), and the version.
    let major = |table: &Path, more: &[&str]| -> (Vec<String>, serde_json::Value) {
        let t = table.to_str().unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&run(
                &[&["compact", t, "--major", "--json"][..], more].concat()
            ))
            .unwrap();
        let mut stores: Vec<String> = v["stores"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                format!(
                    "{}/{}",
                    s["region"].as_str().unwrap(),
                    s["family"].as_str().unwrap()
                )
            })
            .collect();
        stores.sort();
        (stores, v["version"].clone())
    };
    let users = dir.path().join("users");
    let u = users.to_str().unwrap();
    run(&[
        "import",
        "--schema",
        &format!("{SEEDS}/users.toml"),
        &format!("{SEEDS}/users.csv"),
        "--table",
        u,
        "-q",
    ]);
    let (first, v) = major(&users, &[]);
    assert_eq!((first.len(), v), (30, serde_json::json!(2)));
    let files = data_files(&Table::open(&users).unwrap());
    let (again, v) = major(&users, &[]);
    assert_eq!((again.len(), v), (0, serde_json::Value::Null), "{again:?}");
    assert_eq!(data_files(&Table::open(&users).unwrap()), files);
    assert!(run(&["compact", u, "--major"]).contains("nothing to compact (a store of one file"));
    // VERSIONS changed: that family's stores, and only those, are compacted again.
    run(&["table", "alter", u, "--family", "s", "--versions", "2"]);
    let (altered, _) = major(&users, &[]);
    assert_eq!(altered.len(), 10, "{altered:?}");
    assert!(altered.iter().all(|s| s.ends_with("/s")), "{altered:?}");
    assert_eq!(major(&users, &[]).0.len(), 0);
    // Family h keeps 3650 days: in 2049 its cells are past the TTL.
    let (expired, _) = major(&users, &["--now-ms", "2500000000000"]);
    assert!(
        !expired.is_empty() && expired.iter().all(|s| s.ends_with("/h")),
        "{expired:?}"
    );
    // Per-cell TTLs are tags: such a store is compacted every time.
    let accounts = dir.path().join("accounts");
    let a = accounts.to_str().unwrap();
    run(&[
        "import",
        "--schema",
        &format!("{SEEDS}/accounts.toml"),
        &format!("{SEEDS}/accounts-day1.csv"),
        "--table",
        a,
        "-q",
    ]);
    major(&accounts, &["--now-ms", "1700000000000"]);
    let (tagged, _) = major(&accounts, &["--now-ms", "1700000000000"]);
    assert!(
        !tagged.is_empty() && tagged.iter().all(|s| s.ends_with("/s")),
        "{tagged:?}"
    );
}

/// Paths of every file under `data/`.
fn data_files(t: &Table) -> std::collections::BTreeSet<PathBuf> {
    common::files_under(&t.dir().join("data"))
        .into_iter()
        .collect()
}
