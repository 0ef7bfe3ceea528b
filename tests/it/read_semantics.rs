//! Unit tests of the read path (`hfkit::read`): each delete marker, KEEP_DELETED_CELLS, TTL and
//! MIN_VERSIONS, time ranges, raw reads, scans, and file skipping.

use std::sync::Arc;

use hfkit::format::bloom::BloomType;
use hfkit::format::cell::{Cell, CellType, CellTypeOwned};
use hfkit::format::reader::HFileReader;
use hfkit::format::writer::{HFileWriter, WriterOptions};
use hfkit::read::{
    get, get_with_stats, scan, FamilyReadSettings, KeepDeletedCells, ReadError, ReadOptions, Store,
    TimeRange,
};

fn cell(row: &str, fam: &str, q: &str, ts: i64, t: CellType, v: &str) -> Cell {
    Cell {
        cell_type: CellTypeOwned(t),
        ..Cell::put(
            row.as_bytes(),
            fam.as_bytes(),
            q.as_bytes(),
            ts,
            v.as_bytes(),
        )
    }
}
fn put(row: &str, q: &str, ts: i64, v: &str) -> Cell {
    cell(row, "f", q, ts, CellType::Put, v)
}
fn del(row: &str, q: &str, ts: i64, t: CellType) -> Cell {
    cell(row, "f", q, ts, t, "")
}

fn file_with(mut cells: Vec<Cell>, bloom: Option<BloomType>) -> Arc<HFileReader> {
    cells.sort_by(|a, b| hfkit::format::cell::compare_cells(&a.as_ref(), &b.as_ref()));
    let opts = WriterOptions {
        bloom,
        ..Default::default()
    };
    let mut w = HFileWriter::new(Vec::new(), opts).unwrap();
    for c in &cells {
        w.append(&c.as_ref()).unwrap();
    }
    let (bytes, _) = w.finish().unwrap();
    Arc::new(HFileReader::from_bytes(bytes).unwrap())
}

fn file(cells: Vec<Cell>) -> Arc<HFileReader> {
    file_with(cells, Some(BloomType::Row))
}

/// A store of family "f" whose i-th file has sequence id i + 1.
fn store(settings: FamilyReadSettings, files: Vec<Vec<Cell>>) -> Store {
    Store {
        family: b"f".to_vec(),
        settings,
        files: files
            .into_iter()
            .enumerate()
            .map(|(i, c)| (file(c), i as u64 + 1))
            .collect(),
    }
}

fn versions(n: u32) -> FamilyReadSettings {
    FamilyReadSettings {
        versions: n,
        ..Default::default()
    }
}

fn all(n: u32) -> ReadOptions {
    ReadOptions {
        max_versions: n,
        ..Default::default()
    }
}

/// "q@ts=value" for each cell (type name for markers).
fn show(cells: &[Cell]) -> Vec<String> {
    cells
        .iter()
        .map(|c| {
            let what = if c.cell_type() == CellType::Put {
                String::from_utf8_lossy(&c.value).into_owned()
            } else {
                c.cell_type().name().to_string()
            };
            format!(
                "{}@{}={}",
                String::from_utf8_lossy(&c.qualifier),
                c.timestamp,
                what
            )
        })
        .collect()
}

fn get_r(s: &Store, opts: &ReadOptions) -> Vec<String> {
    show(&get(std::slice::from_ref(s), b"r", opts).unwrap())
}

#[test]
fn delete_masks_one_version() {
    let s = store(
        versions(5),
        vec![
            vec![
                put("r", "a", 5, "a5"),
                put("r", "a", 3, "a3"),
                put("r", "b", 5, "b5"),
            ],
            vec![del("r", "a", 5, CellType::Delete)],
        ],
    );
    assert_eq!(get_r(&s, &all(5)), ["a@3=a3", "b@5=b5"]);
}

#[test]
fn delete_column_masks_older_versions() {
    let s = store(
        versions(5),
        vec![
            vec![
                put("r", "a", 6, "a6"),
                put("r", "a", 4, "a4"),
                put("r", "a", 2, "a2"),
            ],
            vec![
                del("r", "a", 4, CellType::DeleteColumn),
                put("r", "b", 1, "b1"),
            ],
        ],
    );
    assert_eq!(get_r(&s, &all(5)), ["a@6=a6", "b@1=b1"]);
}

#[test]
fn delete_family_masks_every_column_including_empty_qualifier() {
    let s = store(
        versions(5),
        vec![vec![
            put("r", "", 9, "e9"),
            put("r", "", 4, "e4"),
            put("r", "a", 4, "a4"),
            put("r", "b", 5, "b5"),
            del("r", "", 4, CellType::DeleteFamily),
        ]],
    );
    assert_eq!(get_r(&s, &all(5)), ["@9=e9", "b@5=b5"]);
}

#[test]
fn delete_family_version_masks_one_timestamp_in_every_column() {
    let s = store(
        versions(5),
        vec![
            vec![
                put("r", "a", 4, "a4"),
                put("r", "a", 3, "a3"),
                put("r", "b", 4, "b4"),
            ],
            vec![
                put("r", "c", 5, "c5"),
                del("r", "", 4, CellType::DeleteFamilyVersion),
            ],
        ],
    );
    assert_eq!(get_r(&s, &all(5)), ["a@3=a3", "c@5=c5"]);
}

#[test]
fn delete_masks_later_put_with_older_timestamp() {
    // The marker (seq 1) masks a Put written later (seq 2) with the same timestamp.
    let s = store(
        versions(3),
        vec![
            vec![del("r", "a", 5, CellType::DeleteColumn)],
            vec![put("r", "a", 5, "late"), put("r", "a", 6, "new")],
        ],
    );
    assert_eq!(get_r(&s, &all(3)), ["a@6=new"]);
}

#[test]
fn duplicates_newest_sequence_wins_and_count_once() {
    let s = store(
        versions(2),
        vec![
            vec![put("r", "a", 5, "old5"), put("r", "a", 4, "old4")],
            vec![put("r", "a", 5, "new5")],
        ],
    );
    assert_eq!(get_r(&s, &all(2)), ["a@5=new5", "a@4=old4"]);
    let got = get(std::slice::from_ref(&s), b"r", &all(2)).unwrap();
    assert_eq!(got[0].seq_id, 2, "cells carry their file's sequence id");
}

#[test]
fn versions_capped_by_family() {
    let s = store(
        versions(2),
        vec![vec![
            put("r", "a", 3, "3"),
            put("r", "a", 2, "2"),
            put("r", "a", 1, "1"),
        ]],
    );
    assert_eq!(get_r(&s, &all(1)), ["a@3=3"]);
    assert_eq!(get_r(&s, &all(5)), ["a@3=3", "a@2=2"]);
    // Raw: requested versions, not capped.
    let raw = ReadOptions {
        raw: true,
        ..all(5)
    };
    assert_eq!(get_r(&s, &raw), ["a@3=3", "a@2=2", "a@1=1"]);
}

fn kdc_store(kdc: KeepDeletedCells) -> Store {
    store(
        FamilyReadSettings {
            versions: 5,
            keep_deleted_cells: kdc,
            ..Default::default()
        },
        vec![vec![
            put("r", "a", 10, "a10"),
            put("r", "a", 20, "a20"),
            del("r", "a", 30, CellType::DeleteColumn),
            put("r", "b", 10, "b10"),
            del("r", "", 15, CellType::DeleteFamily),
        ]],
    )
}

#[test]
fn keep_deleted_cells_false_markers_newer_than_range_still_apply() {
    let s = kdc_store(KeepDeletedCells::False);
    assert!(get_r(&s, &all(5)).is_empty());
    let tt = ReadOptions {
        time_range: TimeRange::between(0, 25).unwrap(),
        ..all(5)
    };
    assert!(get_r(&s, &tt).is_empty());
}

#[test]
fn keep_deleted_cells_true_and_ttl_allow_time_travel() {
    for kdc in [KeepDeletedCells::True, KeepDeletedCells::Ttl] {
        let s = kdc_store(kdc);
        // Without a time range every marker applies.
        assert!(get_r(&s, &all(5)).is_empty(), "{kdc:?}");
        // [0, 25): the DeleteColumn@30 is outside the range and ignored; the DeleteFamily@15
        // is inside and masks ts ≤ 15.
        let tt = ReadOptions {
            time_range: TimeRange::between(0, 25).unwrap(),
            ..all(5)
        };
        assert_eq!(get_r(&s, &tt), ["a@20=a20"], "{kdc:?}");
        // [0, 12): neither marker applies.
        let tt = ReadOptions {
            time_range: TimeRange::between(0, 12).unwrap(),
            ..all(5)
        };
        assert_eq!(get_r(&s, &tt), ["a@10=a10", "b@10=b10"], "{kdc:?}");
    }
}

#[test]
fn time_range_time_travel_and_exact_timestamp() {
    let s = store(
        versions(5),
        vec![vec![
            put("r", "a", 30, "30"),
            put("r", "a", 20, "20"),
            put("r", "a", 10, "10"),
        ]],
    );
    let tr = |min, max, n| ReadOptions {
        time_range: TimeRange::between(min, max).unwrap(),
        ..all(n)
    };
    assert_eq!(get_r(&s, &tr(0, 25, 1)), ["a@20=20"]);
    assert_eq!(get_r(&s, &tr(0, 25, 5)), ["a@20=20", "a@10=10"]);
    assert_eq!(get_r(&s, &tr(15, 31, 5)), ["a@30=30", "a@20=20"]);
    let at = ReadOptions {
        time_range: TimeRange::at(10).unwrap(),
        ..all(1)
    };
    assert_eq!(get_r(&s, &at), ["a@10=10"]);
    assert!(TimeRange::between(5, 4).is_err());
}

fn ttl_settings(versions: u32, min_versions: u32) -> FamilyReadSettings {
    FamilyReadSettings {
        versions,
        min_versions,
        ttl_seconds: Some(10),
        keep_deleted_cells: KeepDeletedCells::False,
    }
}

#[test]
fn ttl_without_min_versions() {
    let s = store(
        ttl_settings(5, 0),
        vec![vec![
            put("r", "a", 95_000, "fresh"),
            put("r", "a", 90_000, "edge"),
            put("r", "a", 89_999, "old"),
            put("r", "b", 80_000, "old"),
        ]],
    );
    let opts = ReadOptions {
        now_ms: 100_000,
        ..all(5)
    };
    // oldestUnexpiredTS = 90 000: ts < 90 000 is expired.
    assert_eq!(get_r(&s, &opts), ["a@95000=fresh", "a@90000=edge"]);
    // With now = 0 (default) nothing expires.
    assert_eq!(get_r(&s, &all(5)).len(), 4);
    // Raw reads ignore TTL.
    let raw = ReadOptions {
        raw: true,
        ..opts.clone()
    };
    assert_eq!(get_r(&s, &raw).len(), 4);
}

#[test]
fn ttl_with_min_versions_keeps_newest_versions() {
    let cells = vec![
        put("r", "a", 95_000, "fresh"),
        put("r", "a", 50_000, "old1"),
        put("r", "a", 40_000, "old2"),
        put("r", "a", 30_000, "old3"),
        put("r", "b", 20_000, "b-old"),
    ];
    let opts = ReadOptions {
        now_ms: 100_000,
        ..all(5)
    };
    let s = store(ttl_settings(5, 2), vec![cells.clone()]);
    assert_eq!(
        get_r(&s, &opts),
        ["a@95000=fresh", "a@50000=old1", "b@20000=b-old"]
    );
    let s = store(ttl_settings(5, 1), vec![cells.clone()]);
    assert_eq!(get_r(&s, &opts), ["a@95000=fresh", "b@20000=b-old"]);
    // Deleted versions do not count towards MIN_VERSIONS; expired markers still apply.
    let s = store(
        ttl_settings(5, 2),
        vec![cells, vec![del("r", "a", 50_000, CellType::Delete)]],
    );
    assert_eq!(
        get_r(&s, &opts),
        ["a@95000=fresh", "a@40000=old2", "b@20000=b-old"]
    );
}

#[test]
fn cell_ttl_tag_shortens_lifetime() {
    let mut c = put("r", "a", 1_000, "tagged");
    c.tags = vec![0, 9, 8];
    c.tags.extend_from_slice(&500i64.to_be_bytes());
    let s = store(versions(3), vec![vec![c, put("r", "b", 1_000, "plain")]]);
    let opts = |now| ReadOptions {
        now_ms: now,
        ..all(3)
    };
    assert_eq!(get_r(&s, &opts(1_500)).len(), 2);
    assert_eq!(get_r(&s, &opts(1_501)), ["b@1000=plain"]);
}

#[test]
fn raw_returns_markers_and_masked_cells() {
    let s = store(
        versions(1),
        vec![
            vec![put("r", "a", 5, "a5"), put("r", "a", 3, "a3")],
            vec![
                del("r", "a", 5, CellType::Delete),
                del("r", "", 4, CellType::DeleteFamily),
            ],
        ],
    );
    let raw = |n| ReadOptions {
        raw: true,
        ..all(n)
    };
    assert_eq!(
        get_r(&s, &raw(1)),
        ["@4=DeleteFamily", "a@5=Delete", "a@5=a5"]
    );
    assert_eq!(
        get_r(&s, &raw(2)),
        ["@4=DeleteFamily", "a@5=Delete", "a@5=a5", "a@3=a3"]
    );
    assert!(get_r(&s, &all(1)).is_empty());
    let bad = ReadOptions {
        columns: vec![(b"f".to_vec(), Some(b"a".to_vec()))],
        ..raw(1)
    };
    assert!(matches!(
        get(std::slice::from_ref(&s), b"r", &bad),
        Err(ReadError::Options(_))
    ));
}

#[test]
fn explicit_columns() {
    let s = store(
        versions(3),
        vec![vec![
            put("r", "a", 2, "a2"),
            put("r", "a", 1, "a1"),
            put("r", "b", 2, "b2"),
            put("r", "c", 2, "c2"),
            put("r", "c", 1, "c1"),
            del("r", "c", 2, CellType::Delete),
        ]],
    );
    let cols = |qs: &[&str], n| ReadOptions {
        columns: qs
            .iter()
            .map(|q| (b"f".to_vec(), Some(q.as_bytes().to_vec())))
            .collect(),
        ..all(n)
    };
    assert_eq!(get_r(&s, &cols(&["c", "a"], 1)), ["a@2=a2", "c@1=c1"]);
    assert_eq!(get_r(&s, &cols(&["a", "zz"], 5)), ["a@2=a2", "a@1=a1"]);
    // A whole-family entry wins over its qualifiers; other families are not read.
    let mut o = cols(&["a"], 1);
    o.columns.push((b"f".to_vec(), None));
    assert_eq!(get_r(&s, &o).len(), 3);
    let other = ReadOptions {
        columns: vec![(b"g".to_vec(), None)],
        ..all(1)
    };
    assert!(get_r(&s, &other).is_empty());
}

fn two_family_stores() -> Vec<Store> {
    let g = |row: &str, q: &str, ts: i64| cell(row, "g", q, ts, CellType::Put, "g");
    vec![
        Store {
            family: b"g".to_vec(),
            settings: versions(1),
            files: vec![(
                file(vec![g("a", "x", 1), g("c", "x", 1), g("d", "x", 1)]),
                1,
            )],
        },
        store(
            versions(1),
            vec![
                vec![
                    put("a", "q", 1, "f"),
                    put("b", "q", 1, "f"),
                    put("bb", "q", 1, "f"),
                ],
                vec![
                    del("d", "", 9, CellType::DeleteFamily),
                    put("e", "q", 1, "f"),
                    put("d", "q", 1, "f"),
                ],
            ],
        ),
    ]
}

fn scan_rows(stores: &[Store], opts: &ReadOptions) -> Vec<String> {
    scan(stores, opts)
        .unwrap()
        .map(|r| {
            let r = r.unwrap();
            let fams: Vec<String> = r
                .cells
                .iter()
                .map(|c| String::from_utf8_lossy(&c.family).into_owned())
                .collect();
            format!("{}:{}", String::from_utf8_lossy(&r.row), fams.join(","))
        })
        .collect()
}

#[test]
fn scan_rows_families_range_prefix_limit_reverse() {
    let stores = two_family_stores();
    let o = ReadOptions::default();
    assert_eq!(
        scan_rows(&stores, &o),
        ["a:f,g", "b:f", "bb:f", "c:g", "d:g", "e:f"]
    );
    let range = ReadOptions {
        start_row: b"b".to_vec(),
        stop_row: b"d".to_vec(),
        ..Default::default()
    };
    assert_eq!(scan_rows(&stores, &range), ["b:f", "bb:f", "c:g"]);
    let prefix = ReadOptions {
        prefix: Some(b"b".to_vec()),
        ..Default::default()
    };
    assert_eq!(scan_rows(&stores, &prefix), ["b:f", "bb:f"]);
    let limit = ReadOptions {
        limit: Some(2),
        start_row: b"b".to_vec(),
        ..Default::default()
    };
    assert_eq!(scan_rows(&stores, &limit), ["b:f", "bb:f"]);
    let rev = ReadOptions {
        reverse: true,
        ..Default::default()
    };
    assert_eq!(
        scan_rows(&stores, &rev),
        ["e:f", "d:g", "c:g", "bb:f", "b:f", "a:f,g"]
    );
    let rev_limit = ReadOptions {
        reverse: true,
        limit: Some(2),
        stop_row: b"d".to_vec(),
        ..Default::default()
    };
    assert_eq!(scan_rows(&stores, &rev_limit), ["c:g", "bb:f"]);
    let fam = ReadOptions {
        columns: vec![(b"g".to_vec(), None)],
        ..Default::default()
    };
    assert_eq!(scan_rows(&stores, &fam), ["a:g", "c:g", "d:g"]);
}

#[test]
fn wrong_family_is_an_error() {
    let s = Store {
        family: b"f".to_vec(),
        settings: versions(1),
        files: vec![(file(vec![cell("r", "g", "q", 1, CellType::Put, "")]), 1)],
    };
    let e = get(std::slice::from_ref(&s), b"r", &all(1)).unwrap_err();
    assert!(matches!(e, ReadError::WrongFamily { .. }), "{e}");
}

#[test]
fn get_skips_files_by_bloom_time_range_and_key_range() {
    // Three files spanning rows a..z; only one holds row "m".
    let mk = |rows: &[&str], ts: i64| rows.iter().map(|r| put(r, "q", ts, r)).collect::<Vec<_>>();
    let s = Store {
        family: b"f".to_vec(),
        settings: versions(3),
        files: vec![
            (file_with(mk(&["a", "k", "z"], 10), Some(BloomType::Row)), 1),
            (file_with(mk(&["a", "m", "z"], 20), Some(BloomType::Row)), 2),
            (file_with(mk(&["n", "p"], 30), Some(BloomType::Row)), 3),
            (file_with(mk(&["a", "z"], 40), None), 4),
        ],
    };
    let stores = [s];
    let (cells, st) = get_with_stats(&stores, b"m", &all(3)).unwrap();
    assert_eq!(show(&cells), ["q@20=m"]);
    assert_eq!(st.files_considered, 4);
    assert_eq!(st.skipped_bloom, 1, "{st:?}");
    assert_eq!(st.skipped_key_range, 1, "{st:?}");
    assert_eq!(st.files_read, 2, "{st:?}");
    // Time range [15, 25) rules out the ts-10, ts-30 and ts-40 files before anything else.
    let tr = ReadOptions {
        time_range: TimeRange::between(15, 25).unwrap(),
        ..all(3)
    };
    let (cells, st) = get_with_stats(&stores, b"m", &tr).unwrap();
    assert_eq!(show(&cells), ["q@20=m"]);
    assert_eq!(st.skipped_time_range, 3, "{st:?}");
    assert_eq!(st.files_read, 1, "{st:?}");
}

#[test]
fn get_rowcol_bloom_for_single_column() {
    let s = Store {
        family: b"f".to_vec(),
        settings: versions(1),
        files: vec![
            (
                file_with(
                    vec![put("r", "a", 1, "a"), put("s", "b", 1, "b")],
                    Some(BloomType::RowCol),
                ),
                1,
            ),
            (
                file_with(
                    vec![put("r", "b", 2, "b"), put("s", "b", 2, "b")],
                    Some(BloomType::RowCol),
                ),
                2,
            ),
            // A DeleteFamily for the row must keep its file in a RowCol probe.
            (
                file_with(
                    vec![
                        del("r", "", 1, CellType::DeleteFamily),
                        put("s", "b", 3, "b"),
                    ],
                    Some(BloomType::RowCol),
                ),
                3,
            ),
        ],
    };
    let stores = [s];
    let one = ReadOptions {
        columns: vec![(b"f".to_vec(), Some(b"b".to_vec()))],
        ..all(1)
    };
    let (cells, st) = get_with_stats(&stores, b"r", &one).unwrap();
    assert_eq!(show(&cells), ["b@2=b"]);
    assert_eq!(st.skipped_bloom, 1, "{st:?}");
    assert_eq!(st.files_read, 2, "{st:?}");
}

#[test]
fn scan_skips_files_by_key_range_and_ttl() {
    let settings = FamilyReadSettings {
        versions: 1,
        min_versions: 0,
        ttl_seconds: Some(1),
        keep_deleted_cells: KeepDeletedCells::False,
    };
    let s = Store {
        family: b"f".to_vec(),
        settings: settings.clone(),
        files: vec![
            (
                file(vec![put("a", "q", 10_000, "a"), put("b", "q", 10_000, "b")]),
                1,
            ),
            (
                file(vec![put("c", "q", 10_000, "c"), put("d", "q", 10_000, "d")]),
                2,
            ),
            (file(vec![put("c", "q", 1_000, "expired")]), 3),
        ],
    };
    let stores = [s];
    let o = ReadOptions {
        start_row: b"bb".to_vec(),
        stop_row: b"zz".to_vec(),
        now_ms: 10_500,
        ..Default::default()
    };
    let sc = scan(&stores, &o).unwrap();
    let st = sc.stats();
    let rows: Vec<_> = sc.map(|r| r.unwrap().row).collect();
    assert_eq!(rows, [b"c".to_vec(), b"d".to_vec()]);
    assert_eq!(st.skipped_key_range, 1, "{st:?}");
    assert_eq!(st.skipped_ttl, 1, "{st:?}");
    assert_eq!(st.files_read, 1, "{st:?}");
    // MIN_VERSIONS > 0: expired files may still hold surviving versions and are read.
    let mut stores = stores;
    stores[0].settings.min_versions = 1;
    let sc = scan(&stores, &o).unwrap();
    assert_eq!(sc.stats().skipped_ttl, 0);
}
