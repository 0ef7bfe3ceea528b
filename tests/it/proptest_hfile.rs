//! Property tests for the HFile core: random cells in HBase order (empty qualifiers and values,
//! values larger than a block, rows up to 32767 bytes, tags, every cell type, many versions of a
//! column, duplicate keys) × every supported codec × block sizes 256 B..64 KiB × index chunk
//! sizes 256 B..128 KiB × checksum types × tags / MVCC on and off.
//!
//! The model is the appended cells themselves: a `Vec<Cell>` sorted by [`compare_cells`]. Every
//! file is checked for
//! - full scan = the input (tags / sequence ids dropped when the file does not include them);
//! - `seek(k)` lands on the first cell ≥ k (and `next()` then gives the cell after it), for
//!   present keys, keys between cells, before the first and after the last cell, and
//!   first-on-row / first-on-column of random rows;
//! - a row "get" (seek to first-on-row, collect while the row matches) = the model's cells of
//!   that row.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use proptest::prelude::*;
use proptest::sample::{select, Index};

use hfkit::format::bloom::{BloomQuery, BloomType};
use hfkit::format::cell::{
    compare_cells, compare_keys, first_on_column, first_on_row, write_key_parts, Cell, CellType,
    CellTypeOwned, KeyView, MAX_ROW_LEN,
};
use hfkit::format::checksum::ChecksumType;
use hfkit::format::compression::Compression;
use hfkit::format::encoding::DataBlockEncoding;
use hfkit::format::reader::HFileReader;
use hfkit::format::writer::{HFileWriter, WriterOptions};
use hfkit::format::FormatError;

/// Data block encodings under test. Widen to `&DataBlockEncoding::ALL` once the encodings land.
const ENCODINGS: &[DataBlockEncoding] = &DataBlockEncoding::ALL;

const CHECKSUMS: [ChecksumType; 3] = [
    ChecksumType::Null,
    ChecksumType::Crc32,
    ChecksumType::Crc32c,
];

/// Bytes for rows and qualifiers: few distinct values so that rows and columns collide.
fn small_bytes(max_len: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        select(vec![0u8, 1, b'a', b'b', b'z', 0x7f, 0x80, 0xff]),
        0..=max_len,
    )
}

fn row() -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        600 => small_bytes(4),
        1 => (select(vec![0u8, b'm', 0xff]), 1000usize..=MAX_ROW_LEN)
            .prop_map(|(b, n)| vec![b; n]),
        1 => Just(vec![b'q'; MAX_ROW_LEN]),
    ]
    .boxed()
}

fn timestamp() -> impl Strategy<Value = i64> {
    prop_oneof![
        8 => 0i64..6,
        1 => Just(i64::MAX),
        1 => Just(0i64),
        1 => any::<i64>(),
    ]
}

fn cell_type() -> impl Strategy<Value = CellType> {
    select(CellType::ALL.to_vec())
}

fn value() -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        30 => Just(Vec::new()),
        150 => prop::collection::vec(any::<u8>(), 1..24),
        // larger than the small blocks
        15 => (300usize..5000, any::<u8>())
            .prop_map(|(n, b)| (0..n).map(|i| b.wrapping_add((i % 7) as u8)).collect()),
        // larger than the biggest block (64 KiB)
        1 => (65_537usize..70_000).prop_map(|n| (0..n).map(|i| (i * 31 % 251) as u8).collect()),
    ]
    .boxed()
}

/// A well-formed tags area: each tag is u16 length (type + value), u8 type, value.
fn tags() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => Just(Vec::new()),
        1 => prop::collection::vec((any::<u8>(), prop::collection::vec(any::<u8>(), 0..6)), 1..4)
            .prop_map(|tags| {
                let mut out = Vec::new();
                for (t, v) in tags {
                    out.extend_from_slice(&((v.len() + 1) as u16).to_be_bytes());
                    out.push(t);
                    out.extend_from_slice(&v);
                }
                out
            }),
    ]
}

fn seq_id() -> impl Strategy<Value = u64> {
    prop_oneof![4 => 0u64..3, 1 => any::<u64>()]
}

prop_compose! {
    fn cell(family: Vec<u8>)(
        row in row(),
        qualifier in small_bytes(3),
        timestamp in timestamp(),
        t in cell_type(),
        value in value(),
        tags in tags(),
        seq_id in seq_id(),
    ) -> Cell {
        Cell {
            row,
            family: family.clone(),
            qualifier,
            timestamp,
            cell_type: CellTypeOwned(t),
            value,
            tags,
            seq_id,
        }
    }
}

prop_compose! {
    /// Many versions of one column (consecutive timestamps, one type).
    fn versions(family: Vec<u8>)(
        row in row(),
        qualifier in small_bytes(3),
        n in 2usize..60,
        base in 0i64..1_000_000,
        t in cell_type(),
        value in prop::collection::vec(any::<u8>(), 0..40),
    ) -> Vec<Cell> {
        (0..n)
            .map(|i| Cell {
                row: row.clone(),
                family: family.clone(),
                qualifier: qualifier.clone(),
                timestamp: base + i as i64,
                cell_type: CellTypeOwned(t),
                value: value.clone(),
                tags: Vec::new(),
                seq_id: i as u64,
            })
            .collect()
    }
}

prop_compose! {
    /// Cells in HBase order: random cells and version runs, sorted by `compare_cells` and
    /// deduplicated, then some keys duplicated again (with other values and sequence ids)
    /// right after the original, as HBase allows.
    fn sorted_cells()(family in select(vec![b"f".to_vec(), b"family".to_vec()]))(
        singles in prop::collection::vec(cell(family.clone()), 0..500),
        runs in prop::collection::vec(versions(family.clone()), 0..3),
        dups in prop::collection::vec((any::<Index>(), value(), seq_id()), 0..6),
    ) -> Vec<Cell> {
        let mut cells = singles;
        cells.extend(runs.into_iter().flatten());
        sort_dedup(&mut cells);
        for (idx, value, seq_id) in dups {
            if cells.is_empty() {
                break;
            }
            let i = idx.index(cells.len());
            let mut c = cells[i].clone();
            c.value = value;
            c.seq_id = seq_id;
            cells.insert(i + 1, c);
        }
        cells
    }
}

prop_compose! {
    fn options()(
        compression in select(Compression::SUPPORTED.to_vec()),
        encoding in select(ENCODINGS.to_vec()),
        checksum_type in select(CHECKSUMS.to_vec()),
        bytes_per_checksum in select(vec![33u32, 512, 16 * 1024]),
        block_size in prop_oneof![
            4 => 256usize..=1024,
            1 => 1025usize..=2048,
            1 => select(vec![4096usize, 16 * 1024, 64 * 1024]),
        ],
        index_block_size in select(vec![256usize, 256, 512, 1024, 128 * 1024]),
        index_min_entries in select(vec![2usize, 4, 16]),
        include_tags in any::<bool>(),
        include_mvcc in any::<bool>(),
        compress_tags in any::<bool>(),
        store_file in any::<bool>(),
        bloom in select(vec![None, Some(BloomType::Row), Some(BloomType::RowCol), Some(BloomType::RowPrefixFixedLength(3))]),
    ) -> WriterOptions {
        WriterOptions {
            block_size,
            compression,
            encoding,
            checksum_type,
            bytes_per_checksum,
            include_tags,
            include_mvcc,
            compress_tags,
            index_block_size,
            index_min_entries,
            store_file,
            // Bloom filters exist only in store files.
            bloom: if store_file { bloom } else { None },
            ..WriterOptions::default()
        }
    }
}

/// A seek target not necessarily present in the file.
#[derive(Clone, Debug)]
enum Probe {
    /// The key of the cell at this index.
    Present(Index),
    /// Just after the cell at this index (older timestamp or longer qualifier).
    After(Index),
    /// First on row / first on column of the cell at this index.
    FirstOnRow(Index),
    FirstOnColumn(Index),
    /// Anything.
    Random(Vec<u8>, Vec<u8>, Vec<u8>, i64, CellType),
    /// First on row of a random row.
    RandomRow(Vec<u8>),
}

fn probe() -> impl Strategy<Value = Probe> {
    prop_oneof![
        3 => any::<Index>().prop_map(Probe::Present),
        2 => any::<Index>().prop_map(Probe::After),
        2 => any::<Index>().prop_map(Probe::FirstOnRow),
        1 => any::<Index>().prop_map(Probe::FirstOnColumn),
        2 => (small_bytes(4), select(vec![Vec::new(), b"f".to_vec(), b"family".to_vec(), b"g".to_vec()]),
              small_bytes(3), timestamp(), cell_type())
            .prop_map(|(r, f, q, ts, t)| Probe::Random(r, f, q, ts, t)),
        2 => small_bytes(4).prop_map(Probe::RandomRow),
    ]
}

fn sort_dedup(cells: &mut Vec<Cell>) {
    cells.sort_by(|a, b| compare_cells(&a.as_ref(), &b.as_ref()));
    cells.dedup_by(|a, b| compare_cells(&a.as_ref(), &b.as_ref()) == Ordering::Equal);
}

fn key_of(row: &[u8], family: &[u8], qualifier: &[u8], ts: i64, t: CellType) -> Vec<u8> {
    let mut k = Vec::new();
    write_key_parts(&mut k, row, family, qualifier, ts, t.code());
    k
}

/// The flat keys a probe stands for, given the file's cells.
fn probe_keys(p: &Probe, cells: &[Cell]) -> Vec<Vec<u8>> {
    let pick = |i: &Index| (!cells.is_empty()).then(|| &cells[i.index(cells.len())]);
    match p {
        Probe::Present(i) => pick(i).map(|c| c.as_ref().key()).into_iter().collect(),
        Probe::After(i) => pick(i)
            .map(|c| {
                let mut longer = c.qualifier.clone();
                longer.push(0);
                let mut v = vec![key_of(
                    &c.row,
                    &c.family,
                    &longer,
                    i64::MAX,
                    CellType::Maximum,
                )];
                if c.timestamp > i64::MIN {
                    v.push(key_of(
                        &c.row,
                        &c.family,
                        &c.qualifier,
                        c.timestamp - 1,
                        c.cell_type(),
                    ));
                }
                if c.cell_type() != CellType::Minimum {
                    v.push(key_of(
                        &c.row,
                        &c.family,
                        &c.qualifier,
                        c.timestamp,
                        CellType::Minimum,
                    ));
                }
                v
            })
            .unwrap_or_default(),
        Probe::FirstOnRow(i) => pick(i).map(|c| first_on_row(&c.row)).into_iter().collect(),
        Probe::FirstOnColumn(i) => pick(i)
            .map(|c| first_on_column(&c.row, &c.family, &c.qualifier))
            .into_iter()
            .collect(),
        Probe::Random(r, f, q, ts, t) => vec![key_of(r, f, q, *ts, *t)],
        Probe::RandomRow(r) => vec![first_on_row(r)],
    }
}

/// Keys every file is probed with: before the first cell and after the last.
fn edge_keys(cells: &[Cell]) -> Vec<Vec<u8>> {
    let mut v = vec![first_on_row(b"")];
    if let Some(first) = cells.first() {
        v.push(first_on_row(&first.row));
        v.push(first.as_ref().key());
    }
    if let Some(last) = cells.last() {
        v.push(last.as_ref().key());
        // "last on row": sorts after every cell of the last row, so after every cell.
        v.push(key_of(&last.row, b"", b"", 0, CellType::Minimum));
    }
    v
}

/// What the file must give back for `c`.
fn stored(c: &Cell, opts: &WriterOptions) -> Cell {
    let mut c = c.clone();
    if !opts.include_tags {
        c.tags.clear();
    }
    if !opts.include_mvcc {
        c.seq_id = 0;
    }
    c
}

fn write_file(cells: &[Cell], opts: &WriterOptions) -> Vec<u8> {
    let mut w = HFileWriter::new(Vec::new(), opts.clone()).unwrap();
    for c in cells {
        w.append(&c.as_ref()).unwrap();
    }
    let (bytes, summary) = w.finish().unwrap();
    assert_eq!(summary.entry_count, cells.len() as u64);
    assert_eq!(summary.file_size, bytes.len() as u64);
    bytes
}

/// The same file through `append_row`: the cells handed over in `groups` (each a run of
/// consecutive cells, of one row or of several).
fn write_file_by_rows(cells: &[Cell], opts: &WriterOptions, groups: &[&[Cell]]) -> Vec<u8> {
    let mut w = HFileWriter::new(Vec::new(), opts.clone()).unwrap();
    for g in groups {
        let refs: Vec<_> = g.iter().map(Cell::as_ref).collect();
        w.append_row(&refs).unwrap();
    }
    let (bytes, summary) = w.finish().unwrap();
    assert_eq!(summary.entry_count, cells.len() as u64);
    bytes
}

/// The same file through `append_records`: the cells as records in the file's layout, handed
/// over `per_call` at a time.
fn write_file_by_records(cells: &[Cell], opts: &WriterOptions, per_call: usize) -> Vec<u8> {
    use hfkit::format::encoding::{CellEncoder, EncodingContext, NoneEncoder};
    let mut encoder = NoneEncoder::new(EncodingContext {
        include_tags: opts.include_tags,
        include_mvcc: opts.include_mvcc,
        compress_tags: opts.compress_tags,
    });
    let mut w = HFileWriter::new(Vec::new(), opts.clone()).unwrap();
    let mut records = Vec::new();
    for call in cells.chunks(per_call.max(1)) {
        records.clear();
        for c in call {
            encoder.encode(&c.as_ref(), &mut records).unwrap();
        }
        w.append_records(&records).unwrap();
    }
    let (bytes, summary) = w.finish().unwrap();
    assert_eq!(summary.entry_count, cells.len() as u64);
    bytes
}

/// Short description of a cell for failure messages (rows can be 32 KiB).
fn brief(c: &Option<Cell>) -> String {
    match c {
        None => "None".into(),
        Some(c) => format!(
            "row[{}]={:02x?} fam={:02x?} q={:02x?} ts={} {:?} v[{}] tags[{}] seq={}",
            c.row.len(),
            &c.row[..c.row.len().min(8)],
            c.family,
            c.qualifier,
            c.timestamp,
            c.cell_type(),
            c.value.len(),
            c.tags.len(),
            c.seq_id
        ),
    }
}

/// Writes `cells` with `opts`, then checks scan, seeks and row gets against the model.
/// Returns the file's index depth.
fn check(cells: &[Cell], opts: &WriterOptions, probes: &[Vec<u8>]) -> u32 {
    let bytes = write_file(cells, opts);
    let reader = HFileReader::from_bytes(bytes).unwrap();
    assert_eq!(reader.entry_count(), cells.len() as u64);
    let want: Vec<Cell> = cells.iter().map(|c| stored(c, opts)).collect();

    // Full scan.
    let mut s = reader.scanner().unwrap();
    let mut got = Vec::with_capacity(want.len());
    while let Some(c) = s.next().unwrap() {
        got.push(c.to_owned());
    }
    assert_eq!(got.len(), want.len(), "scan returned a different count");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            g == w,
            "scan: cell {i} differs: got {} want {}",
            brief(&Some(g.clone())),
            brief(&Some(w.clone()))
        );
    }

    // Seeks: first cell ≥ key, then next() is the cell after it.
    let mut s = reader.scanner().unwrap();
    let mut keys: Vec<Vec<u8>> = edge_keys(cells);
    keys.extend(probes.iter().cloned());
    for key in &keys {
        let target = KeyView::parse(key).unwrap();
        let at = want.partition_point(|c| {
            compare_keys(&KeyView::of(&c.as_ref()), &target) == Ordering::Less
        });
        let got = s.seek(key).unwrap().map(|c| c.to_owned());
        let expect = want.get(at).cloned();
        assert!(
            got == expect,
            "seek to {:02x?}: got {} want {}",
            &key[..key.len().min(40)],
            brief(&got),
            brief(&expect)
        );
        if got.is_some() {
            let next = s.next().unwrap().map(|c| c.to_owned());
            let expect = want.get(at + 1).cloned();
            assert!(
                next == expect,
                "next after seek to {:02x?}: got {} want {}",
                &key[..key.len().min(40)],
                brief(&next),
                brief(&expect)
            );
        }
    }

    // Row gets: the Bloom filter first (it may never rule out a present row or column), then
    // a seek.
    let mut rows: BTreeSet<Vec<u8>> = BTreeSet::new();
    for key in &keys {
        rows.insert(KeyView::parse(key).unwrap().row.to_vec());
    }
    let mut probe = reader.bloom_probe().unwrap();
    for key in &keys {
        let k = KeyView::parse(key).unwrap();
        let present = want
            .iter()
            .any(|c| c.row == k.row && c.family == k.family && c.qualifier == k.qualifier);
        let query = BloomQuery::RowCol {
            row: k.row,
            family: k.family,
            qualifier: k.qualifier,
        };
        if present {
            assert!(
                probe.might_contain(query).unwrap(),
                "Bloom ruled out a present column"
            );
        }
    }
    for row in &rows {
        let model: Vec<&Cell> = want.iter().filter(|c| &c.row == row).collect();
        if !probe.might_contain(BloomQuery::Row(row)).unwrap() {
            assert!(model.is_empty(), "Bloom ruled out a present row");
            continue;
        }
        let mut got = Vec::new();
        let mut cur = s.seek(&first_on_row(row)).unwrap().map(|c| c.to_owned());
        while let Some(c) = cur {
            if &c.row != row {
                break;
            }
            got.push(c);
            cur = s.next().unwrap().map(|c| c.to_owned());
        }
        assert_eq!(
            got.len(),
            model.len(),
            "get of row {:02x?}",
            &row[..row.len().min(8)]
        );
        assert!(
            got.iter().zip(&model).all(|(g, m)| g == *m),
            "get of row {:02x?}: cells differ",
            &row[..row.len().min(8)]
        );
    }
    reader.trailer().num_data_index_levels
}

proptest! {
    // Failing seeds are kept beside this file (`<name>.proptest-regressions`) and re-run first:
    // the default place is relative to a crate root, which tests/it/main.rs is not.
    #![proptest_config(ProptestConfig {
        cases: 48,
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"),
        )),
        ..ProptestConfig::default()
    })]

    #[test]
    fn scan_seek_and_get_match_the_model(
        cells in sorted_cells(),
        opts in options(),
        probes in prop::collection::vec(probe(), 0..40),
    ) {
        let mut keys = Vec::new();
        for p in &probes {
            keys.extend(probe_keys(p, &cells));
        }
        check(&cells, &opts, &keys);
    }

    #[test]
    fn append_records_writes_the_same_bytes_as_append(
        cells in sorted_cells(),
        opts in options(),
        per_call in 1usize..60,
    ) {
        // The cells as the file's record layout holds them: without tags or sequence ids
        // when it has no field for them.
        let cells: Vec<Cell> = cells
            .into_iter()
            .map(|mut c| {
                if !opts.include_tags {
                    c.tags.clear();
                }
                if !opts.include_mvcc {
                    c.seq_id = 0;
                }
                c
            })
            .collect();
        let want = write_file(&cells, &opts);
        for per_call in [per_call, cells.len()] {
            let got = write_file_by_records(&cells, &opts, per_call);
            prop_assert!(got == want, "append_records gave other bytes ({per_call} a call)");
        }
    }

    #[test]
    fn append_row_writes_the_same_bytes_as_append(
        cells in sorted_cells(),
        opts in options(),
        chunk in 1usize..24,
    ) {
        let want = write_file(&cells, &opts);
        // One call per row, and calls of `chunk` cells that cut rows and span them.
        let rows: Vec<&[Cell]> = cells.chunk_by(|a, b| a.row == b.row).collect();
        let chunks: Vec<&[Cell]> = cells.chunks(chunk).collect();
        for groups in [rows, chunks] {
            let got = write_file_by_rows(&cells, &opts, &groups);
            prop_assert!(got == want, "append_row gave other bytes ({} groups)", groups.len());
        }
    }

    #[test]
    fn out_of_order_append_is_an_error(
        mut pair in prop::collection::vec(cell(b"f".to_vec()), 2),
        opts in options(),
    ) {
        sort_dedup(&mut pair);
        prop_assume!(pair.len() == 2);
        let mut w = HFileWriter::new(Vec::new(), opts.clone()).unwrap();
        w.append(&pair[1].as_ref()).unwrap();
        let err = w.append(&pair[0].as_ref()).unwrap_err();
        prop_assert!(matches!(err, FormatError::OutOfOrder { index: 1, .. }), "{err}");
        // The same through append_row, in one call (one row or two) and after a first call.
        let mut w = HFileWriter::new(Vec::new(), opts.clone()).unwrap();
        let err = w.append_row(&[pair[1].as_ref(), pair[0].as_ref()]).unwrap_err();
        prop_assert!(matches!(err, FormatError::OutOfOrder { index: 1, .. }), "{err}");
        // The cells before the refused one are in; a refused cell leaves the writer as it
        // was, as with append.
        prop_assert_eq!(w.entry_count(), 1);
        let mut w = HFileWriter::new(Vec::new(), opts.clone()).unwrap();
        w.append(&pair[1].as_ref()).unwrap();
        w.append_row(&[pair[0].as_ref()]).unwrap_err();
        w.append_row(&[pair[1].as_ref()]).unwrap();
        prop_assert_eq!(w.entry_count(), 2);
        let mut w = HFileWriter::new(Vec::new(), opts).unwrap();
        w.append_row(&[pair[1].as_ref()]).unwrap();
        let err = w.append_row(&[pair[0].as_ref()]).unwrap_err();
        prop_assert!(matches!(err, FormatError::OutOfOrder { index: 1, .. }), "{err}");
    }
}

/// Deterministic cells for the sweep: `n` rows × 3 columns, one row with several versions.
fn sweep_cells(n: usize) -> Vec<Cell> {
    let mut cells = Vec::new();
    for i in 0..n {
        let row = format!("row{i:06}");
        for (j, q) in ["a", "bb", ""].iter().enumerate() {
            let mut c = Cell::put(
                row.as_bytes(),
                b"cf",
                q.as_bytes(),
                1_700_000_000_000 + (i % 5) as i64,
                format!("value-{i}-{j}").as_bytes(),
            );
            if i % 11 == 0 {
                c.tags = vec![0, 3, 1, b'x', b'y'];
            }
            if i % 13 == 0 {
                c.cell_type = CellTypeOwned(CellType::ALL[(i / 13) % CellType::ALL.len()]);
            }
            c.seq_id = i as u64;
            cells.push(c);
        }
        if i == n / 2 {
            for v in 0..200 {
                cells.push(Cell::put(row.as_bytes(), b"cf", b"z", 1000 - v, b"ver"));
            }
        }
    }
    sort_dedup(&mut cells);
    cells
}

/// A fixed sweep over block and index chunk sizes that must produce index depths 1, 2 and 3,
/// each file checked like the property test (every codec and checksum type are visited).
/// Keys larger than an index block: past the first `index_min_entries` entries every
/// intermediate chunk holds one entry (HBase's `writeIntermediateLevel` does the same), so the
/// index grows to the 16 levels HBase's writer stops at; the reader takes every depth the
/// writer writes (it refused more than 10, found by `scan_seek_and_get_match_the_model`).
#[test]
fn keys_larger_than_an_index_block_read_back_at_any_depth() {
    let long = "x".repeat(2000);
    let cells: Vec<Cell> = (0..40)
        .map(|i| Cell::put(format!("{long}{i:04}").as_bytes(), b"f", b"q", 1, b"v"))
        .collect();
    let opts = WriterOptions {
        block_size: 64,
        index_block_size: 1024,
        index_min_entries: 2,
        ..WriterOptions::default()
    };
    let probes: Vec<Vec<u8>> = cells.iter().step_by(7).map(|c| c.as_ref().key()).collect();
    let depth = check(&cells, &opts, &probes);
    assert!(depth > 10, "{depth}");
}

#[test]
fn sweep_produces_index_depths_1_2_and_3() {
    let cells = sweep_cells(2000);
    let mut probes: Vec<Vec<u8>> = cells.iter().step_by(97).map(|c| c.as_ref().key()).collect();
    probes.extend(
        (0..2100)
            .step_by(131)
            .map(|i| first_on_row(format!("row{i:06}").as_bytes())),
    );
    probes.push(first_on_row(b"row000500x"));
    let mut depths = BTreeSet::new();
    let mut n = 0usize;
    for block_size in [256usize, 1024, 64 * 1024] {
        for index_block_size in [256usize, 512, 1024, 128 * 1024] {
            let opts = WriterOptions {
                block_size,
                index_block_size,
                compression: Compression::SUPPORTED[n % Compression::SUPPORTED.len()],
                encoding: ENCODINGS[n % ENCODINGS.len()],
                checksum_type: CHECKSUMS[n % CHECKSUMS.len()],
                include_tags: n.is_multiple_of(2),
                include_mvcc: !n.is_multiple_of(3),
                ..WriterOptions::default()
            };
            n += 1;
            let depth = check(&cells, &opts, &probes);
            depths.insert(depth);
        }
    }
    for d in [1, 2, 3] {
        assert!(
            depths.contains(&d),
            "no file had index depth {d}: {depths:?}"
        );
    }
}
