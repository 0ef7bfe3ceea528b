//! Table-level reads (`table::read::TableReader`, `hfkit get` / `hfkit scan`): a table of four
//! regions and two families loaded by three attaches (files straddling regions get split),
//! compared with (1) the store-level read path over the *unsplit* input files, as if the table
//! were one region, and (2) a simple declarative model of Put-only reads; the CLI end to end in
//! every format; and a reader that scans while attaches repeat.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use hfkit::format::bloom::BloomType;
use hfkit::format::cell::{compare_cells, Cell, CellType, CellTypeOwned};
use hfkit::format::reader::HFileReader;
use hfkit::format::text::cell_line;
use hfkit::format::writer::{HFileWriter, WriterOptions};
use hfkit::read::{self, FamilyReadSettings, ReadOptions, Row, Store, TimeRange};
use hfkit::table::directory::Table;
use hfkit::table::manifest::FamilyEntry;
use hfkit::table::read::TableReader;

/// splitmix64.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

const SPLITS: [&[u8]; 3] = [b"c", b"k\x00", b"r"];
const ROWS: [&[u8]; 16] = [
    b"a0",
    b"a1",
    b"a2",
    b"b\x00",
    b"b\xff",
    b"c",
    b"c1",
    b"d",
    b"k",
    b"k\x00",
    b"k\x001",
    b"m",
    b"q\xff",
    b"r",
    b"s1",
    b"z\xff\xff",
];
const QUALIFIERS: [&[u8]; 3] = [b"", b"q1", b"q2"];

fn families() -> Vec<FamilyEntry> {
    let mut f = FamilyEntry::new("f");
    f.versions = 3;
    f.compression = "SNAPPY".into();
    let mut g = FamilyEntry::new("g");
    g.bloom_filter = "ROWCOL".into();
    vec![f, g]
}

fn writer_options(family: &str) -> WriterOptions {
    WriterOptions {
        block_size: 64,
        bloom: Some(if family == "g" {
            BloomType::RowCol
        } else {
            BloomType::Row
        }),
        ..WriterOptions::default()
    }
}

fn sort_dedup(cells: &mut Vec<Cell>) {
    cells.sort_by(|a, b| compare_cells(&a.as_ref(), &b.as_ref()));
    cells.dedup_by(|a, b| compare_cells(&a.as_ref(), &b.as_ref()).is_eq());
}

fn hfile_bytes(family: &str, cells: &[Cell]) -> Vec<u8> {
    let mut w = HFileWriter::new(Vec::new(), writer_options(family)).unwrap();
    for c in cells {
        w.append(&c.as_ref()).unwrap();
    }
    w.finish().unwrap().0
}

/// The cells of load `load` (0-based) of `family`. Family `f` gets delete markers in load 2;
/// family `g` only Puts.
fn load_cells(rng: &mut Rng, load: usize, family: &[u8]) -> Vec<Cell> {
    let mut cells = Vec::new();
    for row in ROWS {
        if rng.below(4) == 0 {
            continue;
        }
        for _ in 0..1 + rng.below(4) {
            let q = *rng.pick(&QUALIFIERS);
            let ts = 1 + rng.below(6) as i64;
            let value = format!("v{load}{}", rng.below(100));
            let mut c = Cell::put(row, family, q, ts, value.as_bytes());
            if family == b"f" && load == 2 && rng.below(3) == 0 {
                let t = *rng.pick(&[
                    CellType::Delete,
                    CellType::DeleteColumn,
                    CellType::DeleteFamily,
                    CellType::DeleteFamilyVersion,
                ]);
                if t.is_delete_family_kind() {
                    c.qualifier.clear();
                }
                c.cell_type = CellTypeOwned(t);
                c.value.clear();
            }
            cells.push(c);
        }
    }
    sort_dedup(&mut cells);
    cells
}

/// A loaded table, and the oracle's stores (every load as one unsplit file per family, with the
/// load's sequence id).
struct Fixture {
    _tmp: tempfile::TempDir,
    table: Table,
    oracle: Vec<Store>,
    /// Family `g`'s loads: (seq id, cells).
    g_loads: Vec<(u64, Vec<Cell>)>,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let splits: Vec<Vec<u8>> = SPLITS.iter().map(|s| s.to_vec()).collect();
    let table = Table::create(&tmp.path().join("t"), "default:t", families(), &splits).unwrap();
    let mut rng = Rng(7);
    let mut oracle_files: BTreeMap<&str, Vec<(Arc<HFileReader>, u64)>> = BTreeMap::new();
    let mut g_loads = Vec::new();
    for load in 0..3 {
        let bulk = tmp.path().join(format!("bulk{load}"));
        let mut by_family = Vec::new();
        for fam in ["f", "g"] {
            let cells = load_cells(&mut rng, load, fam.as_bytes());
            std::fs::create_dir_all(bulk.join(fam)).unwrap();
            // Load 1 comes as two files per family (cut mid-table); the others as one file.
            let parts: Vec<&[Cell]> = if load == 1 {
                let (a, b) = cells.split_at(cells.len() / 2);
                vec![a, b]
            } else {
                vec![&cells[..]]
            };
            for (i, part) in parts.iter().enumerate() {
                if part.is_empty() {
                    continue;
                }
                std::fs::write(
                    bulk.join(fam).join(format!("part{i}")),
                    hfile_bytes(fam, part),
                )
                .unwrap();
            }
            by_family.push((fam, cells));
        }
        let r = table.attach(&bulk).unwrap();
        assert!(r.split_inputs > 0, "inputs straddle regions");
        for (fam, cells) in by_family {
            let reader = HFileReader::from_bytes(hfile_bytes(fam, &cells)).unwrap();
            oracle_files
                .entry(fam)
                .or_default()
                .push((Arc::new(reader), r.seq_id));
            if fam == "g" {
                g_loads.push((r.seq_id, cells));
            }
        }
    }
    let oracle = families()
        .iter()
        .map(|f| Store {
            family: f.name.as_bytes().to_vec(),
            settings: FamilyReadSettings {
                versions: f.versions,
                ..FamilyReadSettings::default()
            },
            files: oracle_files.remove(f.name.as_str()).unwrap_or_default(),
        })
        .collect();
    Fixture {
        _tmp: tmp,
        table,
        oracle,
        g_loads,
    }
}

/// `None` half of the time, else one of `xs`.
fn maybe(rng: &mut Rng, xs: &[Option<&[u8]>]) -> Option<Vec<u8>> {
    if rng.below(2) == 0 {
        None
    } else {
        rng.pick(xs).map(<[u8]>::to_vec)
    }
}

fn random_options(rng: &mut Rng) -> ReadOptions {
    let keys: [Option<&[u8]>; 9] = [
        None,
        Some(b"a"),
        Some(b"b\x00"),
        Some(b"c"),
        Some(b"c0"),
        Some(b"k"),
        Some(b"k\x00"),
        Some(b"q"),
        Some(b"zz"),
    ];
    let prefixes: [Option<&[u8]>; 6] = [
        None,
        Some(b"a"),
        Some(b"k"),
        Some(b"k\x00"),
        Some(b"b"),
        Some(b"z\xff"),
    ];
    let raw = rng.below(5) == 0;
    let f = || (b"f".to_vec(), None);
    let g = || (b"g".to_vec(), None);
    let col = |fam: &[u8], q: &[u8]| (fam.to_vec(), Some(q.to_vec()));
    let columns = match rng.below(if raw { 3 } else { 7 }) {
        0 => vec![],
        1 => vec![f()],
        2 => vec![g()],
        3 => vec![col(b"f", b"q1")],
        4 => vec![col(b"f", b"q1"), col(b"g", b"q2")],
        5 => vec![col(b"g", b"")],
        _ => vec![col(b"f", b""), col(b"f", b"q2"), g()],
    };
    ReadOptions {
        start_row: maybe(rng, &keys).unwrap_or_default(),
        stop_row: maybe(rng, &keys).unwrap_or_default(),
        prefix: maybe(rng, &prefixes),
        columns,
        time_range: *rng.pick(&[
            TimeRange::ALL,
            TimeRange::between(2, 5).unwrap(),
            TimeRange::between(0, 3).unwrap(),
        ]),
        max_versions: 1 + rng.below(4) as u32,
        limit: *rng.pick(&[None, Some(1), Some(2), Some(5)]),
        raw,
        reverse: rng.below(2) == 0,
        now_ms: 0,
    }
}

fn table_scan(r: &TableReader, opts: &ReadOptions) -> Vec<Row> {
    r.scan(opts).unwrap().map(Result::unwrap).collect()
}

fn oracle_scan(stores: &[Store], opts: &ReadOptions) -> Vec<Row> {
    read::scan(stores, opts)
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn show(rows: &[Row]) -> Vec<String> {
    rows.iter()
        .flat_map(|r| r.cells.iter().map(|c| cell_line(&c.as_ref(), true)))
        .collect()
}

#[test]
fn scans_and_gets_across_regions_equal_the_one_region_oracle() {
    let fx = fixture();
    let reader = TableReader::open(&fx.table).unwrap();
    assert_eq!(reader.manifest().regions.len(), 4);
    let files = reader.manifest().files.len();
    assert!(files >= 12, "{files} files");
    let mut rng = Rng(99);
    let mut nonempty = 0;
    for i in 0..400 {
        let opts = random_options(&mut rng);
        let got = table_scan(&reader, &opts);
        let want = oracle_scan(&fx.oracle, &opts);
        assert_eq!(show(&got), show(&want), "case {i}: {opts:?}");
        assert_eq!(got.len(), want.len(), "case {i}: {opts:?}");
        nonempty += usize::from(!got.is_empty());
        for row in ROWS
            .iter()
            .copied()
            .chain([&b"b"[..], b"k\x00\x00", b"zzz"])
        {
            let (cells, _) = reader.get(row, &opts).unwrap();
            let want = read::get(&fx.oracle, row, &opts).unwrap();
            assert_eq!(cells, want, "case {i}: get {row:?} {opts:?}");
        }
    }
    assert!(nonempty > 150, "only {nonempty} non-empty scans");
}

/// Gets through a block cache far smaller than the table (blocks of 64 bytes, a cache of a
/// few of them) return what gets without one return, and the cache never holds more than
/// its capacity.
#[test]
fn gets_through_a_small_block_cache_equal_gets_without_one() {
    use hfkit::format::block_cache::{BlockCache, ENTRY_OVERHEAD};
    let fx = fixture();
    let plain = TableReader::open(&fx.table).unwrap();
    let cached = TableReader::open(&fx.table).unwrap();
    let capacity = 6 * (64 + ENTRY_OVERHEAD);
    let cache = Arc::new(BlockCache::new(capacity));
    cached.set_block_cache(&cache);
    let mut rng = Rng(5);
    for i in 0..150 {
        let opts = random_options(&mut rng);
        for row in ROWS.iter().copied().chain([&b"b"[..], b"zzz"]) {
            let (want, _) = plain.get(row, &opts).unwrap();
            // Twice: a miss that fills the cache, then (often) a hit.
            for _ in 0..2 {
                let (got, _) = cached.get(row, &opts).unwrap();
                assert_eq!(got, want, "case {i}: get {row:?} {opts:?}");
            }
            let s = cache.stats();
            assert!(s.used <= capacity, "{s:?}");
        }
    }
    let s = cache.stats();
    assert!(s.hits > 100 && s.misses > 100 && s.evictions > 0, "{s:?}");
    // Scans read past the cache.
    let before = cache.stats();
    let all = table_scan(&cached, &ReadOptions::default());
    assert_eq!(
        show(&all),
        show(&table_scan(&plain, &ReadOptions::default()))
    );
    assert_eq!(
        cache.stats().hits + cache.stats().misses,
        before.hits + before.misses
    );
}

#[test]
fn scans_cross_region_boundaries_in_both_directions() {
    let fx = fixture();
    let reader = TableReader::open(&fx.table).unwrap();
    let all = table_scan(&reader, &ReadOptions::default());
    let rows: Vec<&[u8]> = all.iter().map(|r| r.row.as_slice()).collect();
    // Every region contributes, in order.
    assert!(rows.windows(2).all(|w| w[0] < w[1]));
    for split in SPLITS {
        assert!(rows.iter().any(|r| *r < split) && rows.iter().any(|r| *r >= split));
    }
    let rev = table_scan(
        &reader,
        &ReadOptions {
            reverse: true,
            ..Default::default()
        },
    );
    let mut back: Vec<&[u8]> = rev.iter().map(|r| r.row.as_slice()).collect();
    back.reverse();
    assert_eq!(back, rows);
    // A limit spanning a boundary: the first rows from "b" on, across "c" into region 1.
    let opts = ReadOptions {
        start_row: b"b".to_vec(),
        limit: Some(4),
        ..Default::default()
    };
    let got: Vec<_> = table_scan(&reader, &opts)
        .into_iter()
        .map(|r| r.row)
        .collect();
    let want: Vec<_> = rows
        .iter()
        .filter(|r| **r >= &b"b"[..])
        .take(4)
        .map(|r| r.to_vec())
        .collect();
    assert_eq!(got, want);
    // Regions outside the range are not visited: a scan inside region 2 considers only its files.
    let mut sc = reader
        .scan(&ReadOptions {
            start_row: b"k\x00".to_vec(),
            stop_row: b"n".to_vec(),
            ..Default::default()
        })
        .unwrap();
    for r in sc.by_ref() {
        let r = r.unwrap();
        assert!(r.row.as_slice() >= &b"k\x00"[..] && r.row.as_slice() < &b"n"[..]);
    }
    let in_region2 = reader
        .manifest()
        .files
        .iter()
        .filter(|e| e.region == reader.manifest().regions[2].id)
        .count();
    assert_eq!(sc.stats().files_considered, in_region2);
    // An empty range reads nothing; bad options are refused even then.
    let empty = ReadOptions {
        start_row: b"m".to_vec(),
        stop_row: b"a".to_vec(),
        ..Default::default()
    };
    assert!(table_scan(&reader, &empty).is_empty());
    let bad = ReadOptions {
        max_versions: 0,
        ..empty
    };
    assert!(reader.scan(&bad).is_err());
    let err = reader
        .scan(&ReadOptions {
            columns: vec![(b"nope".to_vec(), None)],
            ..Default::default()
        })
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("nope") && err.contains("no such family"),
        "{err}"
    );
}

/// (row, qualifier).
type Column = (Vec<u8>, Vec<u8>);

/// Put-only family `g` (VERSIONS 1): the newest Put per column inside the time range; for
/// equal timestamps the later load wins.
fn model_g(loads: &[(u64, Vec<Cell>)], tr: TimeRange) -> BTreeMap<Column, Vec<u8>> {
    // (timestamp, sequence id, value) of the winning Put.
    let mut best: BTreeMap<Column, (i64, u64, Vec<u8>)> = BTreeMap::new();
    for (seq, cells) in loads {
        for c in cells.iter().filter(|c| tr.within(c.timestamp)) {
            let k = (c.row.clone(), c.qualifier.clone());
            let cand = (c.timestamp, *seq, c.value.clone());
            if best.get(&k).is_none_or(|b| (b.0, b.1) < (cand.0, cand.1)) {
                best.insert(k, cand);
            }
        }
    }
    best.into_iter().map(|(k, v)| (k, v.2)).collect()
}

#[test]
fn put_only_family_matches_a_simple_model() {
    let fx = fixture();
    let reader = TableReader::open(&fx.table).unwrap();
    for tr in [TimeRange::ALL, TimeRange::between(2, 5).unwrap()] {
        let want = model_g(&fx.g_loads, tr);
        let opts = ReadOptions {
            columns: vec![(b"g".to_vec(), None)],
            time_range: tr,
            max_versions: 3,
            ..Default::default()
        };
        let got: BTreeMap<_, _> = table_scan(&reader, &opts)
            .into_iter()
            .flat_map(|r| r.cells)
            .map(|c| ((c.row, c.qualifier), c.value))
            .collect();
        assert_eq!(got, want, "{tr:?}");
    }
}

#[test]
fn gets_read_one_region_and_bloom_filters_skip_files() {
    let fx = fixture();
    let reader = TableReader::open(&fx.table).unwrap();
    let region_of = |row: &[u8]| {
        let m = reader.manifest();
        let i = m.region_of(row).unwrap();
        m.files
            .iter()
            .filter(|e| e.region == m.regions[i].id)
            .count()
    };
    let mut bloom_skips = 0;
    for row in [&b"a05"[..], b"b\x01", b"k\x000", b"m0", b"s0"] {
        let (cells, stats) = reader.get(row, &ReadOptions::default()).unwrap();
        assert!(cells.is_empty());
        assert_eq!(stats.files_considered, region_of(row), "{row:?}");
        bloom_skips += stats.skipped_bloom;
    }
    assert!(bloom_skips > 0, "no Bloom skips");
    let (cells, stats) = reader.get(b"m", &ReadOptions::default()).unwrap();
    assert_eq!(stats.files_considered, region_of(b"m"));
    assert!(cells.iter().all(|c| c.row == b"m"));
}

#[test]
fn missing_files_at_open_are_reported_with_the_path() {
    let fx = fixture();
    let m = fx.table.manifest().unwrap();
    let victim = fx.table.file_path(&m.files[0]);
    std::fs::remove_file(&victim).unwrap();
    let err = TableReader::open(&fx.table).err().unwrap().to_string();
    assert!(
        err.contains(&victim.display().to_string()) && err.contains("missing"),
        "{err}"
    );
}

#[test]
fn a_reader_scanning_while_attaches_repeat_sees_whole_versions() {
    const PER_ATTACH_ROWS: usize = 30;
    let tmp = tempfile::tempdir().unwrap();
    let t = Table::create(
        &tmp.path().join("t"),
        "default:t",
        vec![FamilyEntry::new("f")],
        &[b"h".to_vec(), b"p".to_vec()],
    )
    .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let t = t.clone();
        let stop = stop.clone();
        std::thread::spawn(move || {
            let (mut reads, mut max_version) = (0u64, 0u64);
            while !stop.load(Ordering::SeqCst) {
                let r = TableReader::open(&t).unwrap();
                let version = r.manifest().version;
                let mut cells = 0usize;
                for row in r.scan(&ReadOptions::default()).unwrap() {
                    cells += row.unwrap().cells.len();
                }
                assert_eq!(
                    cells,
                    PER_ATTACH_ROWS * version as usize,
                    "version {version}"
                );
                let rev = r
                    .scan(&ReadOptions {
                        reverse: true,
                        ..Default::default()
                    })
                    .unwrap()
                    .count();
                assert_eq!(rev, PER_ATTACH_ROWS * version as usize);
                reads += 1;
                max_version = max_version.max(version);
            }
            (reads, max_version)
        })
    };
    for n in 0..12 {
        let bulk = tmp.path().join(format!("bulk{n}"));
        std::fs::create_dir_all(bulk.join("f")).unwrap();
        let mut cells: Vec<Cell> = (0..PER_ATTACH_ROWS)
            .map(|i| {
                let row = format!("{}{n:03}", (b'a' + (i % 26) as u8) as char);
                let row = format!("{row}{i}");
                Cell::put(row.as_bytes(), b"f", b"q", 1, b"v")
            })
            .collect();
        sort_dedup(&mut cells);
        assert_eq!(cells.len(), PER_ATTACH_ROWS);
        std::fs::write(bulk.join("f").join("x"), hfile_bytes("f", &cells)).unwrap();
        t.attach(&bulk).unwrap();
    }
    stop.store(true, Ordering::SeqCst);
    let (reads, max_version) = reader.join().unwrap();
    eprintln!("{reads} whole-table reads, newest version seen {max_version}");
    assert!(reads > 0);
}

// ---- CLI ----

use crate::common::hfkit;

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// A small table with binary rows: regions split at "b", two families.
fn cli_table(root: &Path) -> PathBuf {
    let dir = root.join("t");
    let mut g = FamilyEntry::new("g");
    g.versions = 2;
    let t = Table::create(
        &dir,
        "default:t",
        vec![FamilyEntry::new("f"), g],
        &[b"b".to_vec()],
    )
    .unwrap();
    let bulk = root.join("bulk");
    for (fam, cells) in [
        (
            "f",
            vec![
                Cell::put(b"a\x00\xff", b"f", b"q", 5, b"v\x01"),
                Cell::put(b"a1", b"f", b"q", 5, b"one"),
                Cell::put(b"c", b"f", b"q\\", 7, b"see"),
            ],
        ),
        (
            "g",
            vec![
                Cell::put(b"a1", b"g", b"x", 9, b"new"),
                Cell::put(b"a1", b"g", b"x", 3, b"old"),
                Cell::put(b"c", b"g", b"x", 1, b"g-c"),
            ],
        ),
    ] {
        std::fs::create_dir_all(bulk.join(fam)).unwrap();
        std::fs::write(bulk.join(fam).join("h"), hfile_bytes(fam, &cells)).unwrap();
    }
    t.attach(&bulk).unwrap();
    dir
}

#[test]
fn cli_get_and_scan_in_every_format() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = cli_table(tmp.path());
    let t = dir.to_str().unwrap();

    let text = stdout(&hfkit(&["scan", t]));
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("ROW") && lines[0].ends_with("COLUMN+CELL"));
    assert!(
        lines[1].starts_with(" a\\x00\\xFF ")
            && lines[1].ends_with("column=f:q, timestamp=5, value=v\\x01"),
        "{text}"
    );
    assert!(
        text.contains("column=f:q\\x5C, timestamp=7, value=see"),
        "{text}"
    );
    assert!(text.contains("column=g:x, timestamp=9, value=new"));
    assert!(!text.contains("old"));
    assert_eq!(*lines.last().unwrap(), "3 row(s)");

    let tsv = stdout(&hfkit(&["scan", t, "--format", "tsv", "--versions", "2"]));
    assert_eq!(
        tsv,
        "a\\x00\\xFF\tf:q\t5\tPut\tv\\x01\n\
         a1\tf:q\t5\tPut\tone\n\
         a1\tg:x\t9\tPut\tnew\n\
         a1\tg:x\t3\tPut\told\n\
         c\tf:q\\x5C\t7\tPut\tsee\n\
         c\tg:x\t1\tPut\tg-c\n"
    );

    let json = stdout(&hfkit(&["scan", t, "--format", "json", "--reverse"]));
    let rows: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0]["row"], "c");
    assert_eq!(rows[2]["row"], "a\\x00\\xFF");
    assert_eq!(rows[2]["cells"][0]["value"], "v\\x01");
    assert_eq!(rows[1]["cells"][1]["family"], "g");

    let cells = stdout(&hfkit(&[
        "scan", t, "--format", "cells", "--prefix", "a\\x00",
    ]));
    assert_eq!(cells, "6100ff 66 71 5 Put 7601 -\n");

    let limited = stdout(&hfkit(&[
        "scan", t, "--start", "a1", "--limit", "2", "--column", "g:x", "--format", "tsv",
    ]));
    assert_eq!(limited, "a1\tg:x\t9\tPut\tnew\nc\tg:x\t1\tPut\tg-c\n");

    // get
    let text = stdout(&hfkit(&["get", t, "a1", "--versions", "2"]));
    assert!(text.starts_with("COLUMN"), "{text}");
    assert!(text.contains(" g:x "), "{text}");
    assert!(text.contains("timestamp=3, value=old"), "{text}");
    assert!(text.ends_with("1 row(s)\n"), "{text}");
    let json = stdout(&hfkit(&["get", t, "a\\x00\\xFF", "--format", "json"]));
    let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    assert_eq!(v["row"], "a\\x00\\xFF");
    assert_eq!(v["cells"].as_array().unwrap().len(), 1);
    let cells = stdout(&hfkit(&[
        "get",
        t,
        "a1",
        "--format",
        "cells",
        "--time-range",
        "0,5",
    ]));
    assert_eq!(cells, "6131 67 78 3 Put 6f6c64 -\n");
    let absent = hfkit(&["get", t, "zz", "--stats"]);
    assert_eq!(
        stdout(&absent),
        "COLUMN                           CELL\n0 row(s)\n"
    );
    let err = String::from_utf8_lossy(&absent.stderr).to_string();
    assert!(
        err.contains("store files: ") && err.contains("Bloom"),
        "{err}"
    );
}

/// `hfkit get --rows-from`: one get per line, from a file or standard input, printed as the
/// same gets one by one would print them.
#[test]
fn cli_get_rows_from_a_file_or_standard_input() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = cli_table(tmp.path());
    let t = dir.to_str().unwrap();
    let rows = ["a1", "zz", "a\\x00\\xFF", "c"];
    let mut one_by_one = String::new();
    for r in rows {
        one_by_one += &stdout(&hfkit(&["get", t, r, "--format", "tsv"]));
    }
    assert_eq!(one_by_one.lines().count(), 5, "{one_by_one}");
    // An empty line is skipped and a trailing \r dropped.
    let list = tmp.path().join("rows.txt");
    std::fs::write(&list, "a1\n\nzz\r\na\\x00\\xFF\nc\n").unwrap();
    let l = list.to_str().unwrap();
    for cache in ["64MiB", "0", "1KB", "auto"] {
        let got = stdout(&hfkit(&[
            "get",
            t,
            "--rows-from",
            l,
            "--format",
            "tsv",
            "--block-cache-size",
            cache,
        ]));
        assert_eq!(got, one_by_one, "--block-cache-size {cache}");
    }
    let text = stdout(&hfkit(&["get", t, "--rows-from", l]));
    assert_eq!(text.matches("row(s)").count(), 4, "{text}");
    assert_eq!(text.matches("0 row(s)").count(), 1, "{text}");

    let mut child = Command::new(env!("CARGO_BIN_EXE_hfkit"))
        .args(["get", t, "--rows-from", "-", "--format", "tsv"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"a1\nzz\na\\x00\\xFF\nc").unwrap();
    }
    assert_eq!(stdout(&child.wait_with_output().unwrap()), one_by_one);

    // A bad line names the file and line; a row and --rows-from together is a usage error.
    std::fs::write(&list, "a1\nr\\xff\n").unwrap();
    let o = hfkit(&["get", t, "--rows-from", l]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(
        err.contains("rows.txt line 2") && err.contains("\\xff"),
        "{err}"
    );
    assert_eq!(
        hfkit(&["get", t, "a1", "--rows-from", l]).status.code(),
        Some(2)
    );
    assert_eq!(hfkit(&["get", t]).status.code(), Some(2));
    let o = hfkit(&["get", t, "a1", "--block-cache-size", "lots"]);
    assert_eq!(o.status.code(), Some(2));
    let o = hfkit(&[
        "get",
        t,
        "--rows-from",
        tmp.path().join("none").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn cli_read_errors_name_the_problem() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = cli_table(tmp.path());
    let t = dir.to_str().unwrap();
    let o = hfkit(&["scan", t, "--time-range", "5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--time-range"));
    let o = hfkit(&["get", t, "r\\xff"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("\\xFF"));
    let o = hfkit(&["scan", t, "--raw", "--column", "f:q"]);
    assert_eq!(o.status.code(), Some(2));
    let o = hfkit(&["get", t, "a1", "--column", "h:x"]);
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(e.contains("h:x") && e.contains(t), "{e}");
    let o = hfkit(&["scan", tmp.path().join("nope").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let help = stdout(&hfkit(&["scan", "--help"]));
    assert!(help.contains("toStringBinary") && help.contains("--prefix"));
}

#[test]
fn cli_scan_into_a_closed_pipe_exits_0() {
    use std::io::{BufRead, BufReader};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let t = Table::create(
        &dir,
        "default:t",
        vec![FamilyEntry::new("f")],
        &[b"r05000".to_vec()],
    )
    .unwrap();
    let cells: Vec<Cell> = (0..10_000)
        .map(|i| Cell::put(format!("r{i:05}").as_bytes(), b"f", b"q", 1, b"value"))
        .collect();
    std::fs::create_dir_all(tmp.path().join("bulk/f")).unwrap();
    std::fs::write(tmp.path().join("bulk/f/x"), hfile_bytes("f", &cells)).unwrap();
    t.attach(&tmp.path().join("bulk")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_hfkit"))
        .args(["scan", dir.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("ROW"));
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
