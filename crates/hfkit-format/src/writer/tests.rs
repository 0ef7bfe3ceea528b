//! `append_row` against `append`: the same bytes over wide rows (the row path's run loop, its
//! block cuts, Blooms, statistics), and the same refusals.

use super::*;
use crate::bloom::BloomType;
use crate::cell::{Cell, CellRef, CellType, CellTypeOwned};
use crate::compression::Compression;

/// `rows` rows of 16 columns with values of 1..=43 bytes; some rows carry a DeleteFamily
/// first, a repeated key, a DeleteColumn, tags or a large sequence id.
fn wide_rows(rows: usize) -> Vec<Vec<Cell>> {
    let mut out = Vec::new();
    let mut v = 7u64;
    for r in 0..rows {
        let row = format!("{:02x}{r:010}1", r * 256 / rows);
        let mut cells = Vec::new();
        if r % 13 == 5 {
            let mut c = Cell::put(row.as_bytes(), b"f", b"", 1_700_000_000_500, b"");
            c.cell_type = CellTypeOwned(CellType::DeleteFamily);
            cells.push(c);
        }
        for q in 0..16 {
            v = v
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = 1 + (v >> 33) as usize % 43;
            let value: Vec<u8> = (0..len)
                .map(|i| b'a' + ((v >> (i % 50)) % 26) as u8)
                .collect();
            let qualifier = format!("l_q{q:02}{}", "x".repeat(q % 5));
            let mut c = Cell::put(
                row.as_bytes(),
                b"f",
                qualifier.as_bytes(),
                1_700_000_000_000 + (r % 7) as i64,
                &value,
            );
            if r % 11 == 3 && q == 4 {
                c.tags = vec![0, 2, 1, b'x'];
            }
            if r % 17 == 2 {
                c.seq_id = 1000 + q as u64;
            }
            if r % 9 == 4 && q == 8 {
                c.cell_type = CellTypeOwned(CellType::DeleteColumn);
            }
            cells.push(c.clone());
            if r % 5 == 1 && q == 6 {
                // The same key again (HBase allows it): never the first cell of a block.
                c.value = b"again".to_vec();
                cells.push(c);
            }
        }
        out.push(cells);
    }
    out
}

fn opts(block_size: usize, bloom: Option<BloomType>) -> WriterOptions {
    WriterOptions {
        block_size,
        compression: Compression::Snappy,
        bloom,
        ..WriterOptions::default()
    }
}

fn refs(cells: &[Cell]) -> Vec<CellRef<'_>> {
    cells.iter().map(Cell::as_ref).collect()
}

/// [`refs`] with the row and family of equal cells taken from one slice, as the import's
/// lanes hand them over (the row loop's test by address).
fn shared_refs(cells: &[Cell]) -> Vec<CellRef<'_>> {
    let Some(first) = cells.first() else {
        return Vec::new();
    };
    cells
        .iter()
        .map(|c| {
            let mut r = c.as_ref();
            if r.row == first.row.as_slice() {
                r.row = &first.row;
            }
            if r.family == first.family.as_slice() {
                r.family = &first.family;
            }
            r
        })
        .collect()
}

/// The options the wide-rows tests write with: block sizes from one cell to many rows, every
/// Bloom type, every layout of the records (tags and MVCC fields present or not).
fn wide_row_options() -> Vec<(WriterOptions, String)> {
    let mut out = Vec::new();
    for block_size in [64, 300, 1000, 4096, 64 * 1024] {
        for bloom in [
            None,
            Some(BloomType::Row),
            Some(BloomType::RowCol),
            Some(BloomType::RowPrefixFixedLength(4)),
        ] {
            for (include_tags, include_mvcc) in
                [(true, true), (true, false), (false, true), (false, false)]
            {
                let o = WriterOptions {
                    include_tags,
                    include_mvcc,
                    ..opts(block_size, bloom)
                };
                let case = format!(
                    "block size {block_size}, {bloom:?}, tags {include_tags}, mvcc {include_mvcc}"
                );
                out.push((o, case));
            }
        }
    }
    out
}

#[test]
fn append_row_writes_the_bytes_of_append_on_wide_rows() {
    let rows = wide_rows(300);
    for (o, case) in wide_row_options() {
        let rows: Vec<Vec<Cell>> = rows
            .iter()
            .map(|r| {
                r.iter()
                    .filter(|c| o.include_tags || c.tags.is_empty())
                    .cloned()
                    .collect()
            })
            .collect();
        let mut a = HFileWriter::new(Vec::new(), o.clone()).unwrap();
        rows.iter()
            .flatten()
            .for_each(|c| a.append(&c.as_ref()).unwrap());
        let want = a.finish().unwrap();
        for (how, to_refs) in [
            ("own slices", refs as fn(&[Cell]) -> Vec<CellRef<'_>>),
            ("shared slices", shared_refs),
        ] {
            let mut b = HFileWriter::new(Vec::new(), o.clone()).unwrap();
            rows.iter().for_each(|r| b.append_row(&to_refs(r)).unwrap());
            let got = b.finish().unwrap();
            assert_eq!(got.1, want.1, "{case}, {how}");
            assert!(got.0 == want.0, "{case}, {how}: other bytes");
        }
    }
}

#[test]
fn append_row_refuses_a_cell_out_of_order_inside_a_row() {
    let rows = wide_rows(40);
    for block_size in [64, 1000, 64 * 1024] {
        let o = opts(block_size, Some(BloomType::Row));
        let (mut a, mut b) = (
            HFileWriter::new(Vec::new(), o.clone()).unwrap(),
            HFileWriter::new(Vec::new(), o).unwrap(),
        );
        for (r, cells) in rows.iter().enumerate() {
            let mut cells = cells.clone();
            if r % 4 != 2 {
                for c in &cells {
                    a.append(&c.as_ref()).unwrap();
                }
                b.append_row(&refs(&cells)).unwrap();
                continue;
            }
            // Columns 9 and 10 swapped: the 11th cell sorts before the 10th.
            let at = cells.len() - 6;
            cells.swap(at - 1, at);
            let before = b.entry_count();
            let err = b.append_row(&shared_refs(&cells)).unwrap_err();
            assert!(
                matches!(err, FormatError::OutOfOrder { index, .. } if index == before + at as u64),
                "{err}"
            );
            assert_eq!(b.entry_count(), before + at as u64);
            for c in &cells[..at] {
                a.append(&c.as_ref()).unwrap();
            }
            a.append(&cells[at].as_ref()).unwrap_err();
            // The rest of the row, after the refused cell: both writers go on as they were.
            for c in &cells[at + 1..] {
                a.append(&c.as_ref()).unwrap();
            }
            b.append_row(&refs(&cells[at + 1..])).unwrap();
        }
        let (want, got) = (a.finish().unwrap(), b.finish().unwrap());
        assert_eq!(got.1, want.1);
        assert!(got.0 == want.0, "block size {block_size}: other bytes");
    }
}

#[test]
fn append_row_refuses_a_repeated_row_that_sorts_earlier() {
    let rows = wide_rows(3);
    let mut w = HFileWriter::new(Vec::new(), opts(300, None)).unwrap();
    w.append_row(&refs(&rows[1])).unwrap();
    let n = w.entry_count();
    let err = w.append_row(&refs(&rows[0])).unwrap_err();
    assert!(matches!(err, FormatError::OutOfOrder { .. }), "{err}");
    // The last column again with an older timestamp sorts after it: in order.
    let mut last = rows[1][rows[1].len() - 1].clone();
    last.timestamp -= 1;
    w.append_row(&[last.as_ref()]).unwrap();
    // ... and with a newer one before it: refused, as is a qualifier that sorts earlier.
    last.timestamp += 2;
    let mut early = rows[1][3].clone();
    early.timestamp = 0;
    for bad in [last, early] {
        let mut row = rows[1][..0].to_vec();
        row.push(bad);
        assert!(w.append_row(&refs(&row)).is_err());
    }
    assert_eq!(w.entry_count(), n + 1);
}

// ---- append_records ----

use crate::encoding::{CellEncoder, DataBlockEncoding, EncodingContext, NoneEncoder};

/// The records of `cells` in the layout of a file written with `o` (what `append_records`
/// takes), and where each record starts (plus the end).
fn records_of(cells: &[Cell], o: &WriterOptions) -> (Vec<u8>, Vec<usize>) {
    let mut enc = NoneEncoder::new(EncodingContext {
        include_tags: o.include_tags,
        include_mvcc: o.include_mvcc,
        compress_tags: o.compress_tags,
    });
    let mut out = Vec::new();
    let mut starts = vec![0];
    for c in cells {
        enc.encode(&c.as_ref(), &mut out).unwrap();
        starts.push(out.len());
    }
    (out, starts)
}

/// `append` of each cell, and `append_records` of the same cells' records handed over in
/// calls of `per_call` records: the same file and summary.
fn assert_records_write_as_append(cells: &[Cell], o: &WriterOptions, per_call: usize, case: &str) {
    let mut a = HFileWriter::new(Vec::new(), o.clone()).unwrap();
    cells.iter().for_each(|c| a.append(&c.as_ref()).unwrap());
    let want = a.finish().unwrap();
    let (records, starts) = records_of(cells, o);
    let mut b = HFileWriter::new(Vec::new(), o.clone()).unwrap();
    for w in starts
        .chunks(per_call.max(1))
        .map(|c| c[0])
        .collect::<Vec<_>>()
        .windows(2)
    {
        b.append_records(&records[w[0]..w[1]]).unwrap();
    }
    let last = starts[(starts.len() - 1) / per_call.max(1) * per_call.max(1)];
    b.append_records(&records[last..]).unwrap();
    assert_eq!(b.entry_count(), cells.len() as u64, "{case}");
    let got = b.finish().unwrap();
    assert_eq!(got.1, want.1, "{case}");
    assert!(got.0 == want.0, "{case}: other bytes");
}

#[test]
fn append_records_writes_the_bytes_of_append_on_wide_rows() {
    let rows = wide_rows(300);
    for (o, case) in wide_row_options() {
        let cells: Vec<Cell> = rows
            .iter()
            .flatten()
            .filter(|c| o.include_tags || c.tags.is_empty())
            .cloned()
            .collect();
        for per_call in [1, 7, 100, usize::MAX] {
            let case = format!("{case}, {per_call} per call");
            assert_records_write_as_append(&cells, &o, per_call.min(cells.len()), &case);
        }
    }
}

/// Rows of every length from 2 to 40 bytes (so row heads of every size the same-row loop
/// compares, and longer), four of each length that differ in one byte from the one before:
/// the last, a middle one, the second (the first tells the lengths apart). Each holds the
/// next three of 12 columns, so only the row tells a row's first cell from a further cell of
/// the row before. The columns: short qualifiers, qualifiers whose first 8 bytes are the
/// same, a column with two versions, sequence ids rising along the row, one timestamp a row
/// (falling along the row in the rows of a length divisible by 5). Besides, in the rows of
/// 21 bytes, two adjacent cells of the file's biggest size (the first of them is the biggest
/// cell), the second with the file's highest sequence id; and the third row of 4 bytes
/// starts with a Delete and holds the file's earliest Puts, at the Delete's timestamp.
fn rows_of_every_length() -> Vec<Cell> {
    let mut out = Vec::new();
    for len in 2..=40usize {
        let middle = (len / 2).max(1);
        let mut row = vec![b'r'; len];
        row[0] = b'A' + len as u8;
        for (k, columns) in [0..3u8, 3..6, 6..9, 9..12].into_iter().enumerate() {
            match k {
                0 => row[len - 1] = b'a',
                1 => row[len - 1] = b'b',
                2 => row[middle] = b's',
                _ => row[1] = b't',
            }
            for q in columns {
                let qualifier = match q {
                    0..4 => format!("a{q}"),
                    4..8 => format!("common_prefix_{q:02}"),
                    _ => format!("z{q:02}"),
                };
                let value_len = match q {
                    7 if len == 21 => 200,
                    8 if len == 21 => 200 + "common_prefix_07".len() - "z08".len(),
                    _ => 1 + usize::from(q * 3 % 11),
                };
                let ts = match len {
                    4 if k == 2 => 1_600_000_000_000,
                    _ if len % 5 == 0 => 1_700_000_000_000 + len as i64 * 100 + i64::from(12 - q),
                    _ => 1_700_000_000_000 + len as i64 * 100,
                };
                let cell = |ts| {
                    let value = vec![b'v'; value_len];
                    let mut c = Cell::put(&row, b"f", qualifier.as_bytes(), ts, &value);
                    c.seq_id = u64::from(q) + 1 + if len == 21 && q == 8 { 100 } else { 0 };
                    if len == 4 && q == 6 {
                        c.cell_type = CellTypeOwned(CellType::Delete);
                    }
                    c
                };
                out.push(cell(ts));
                if q == 2 {
                    out.push(cell(ts - 1));
                }
            }
        }
    }
    out
}

#[test]
fn append_records_writes_the_bytes_of_append_on_rows_of_every_length() {
    let cells = rows_of_every_length();
    for (o, case) in wide_row_options() {
        for per_call in [1, 5, 100, cells.len()] {
            let case = format!("{case}, {per_call} per call");
            assert_records_write_as_append(&cells, &o, per_call, &case);
        }
    }
}

#[test]
fn append_records_refuses_a_column_out_of_order_within_a_row() {
    // Within a row whose earlier cells the same-row loop takes: a qualifier below the one
    // before with the same first 8 bytes, and a newer version of the column before.
    let cells = rows_of_every_length();
    let at = cells
        .iter()
        .position(|c| c.row.len() == 13 && c.qualifier == b"common_prefix_07")
        .unwrap();
    let mut lower = cells[at].clone();
    lower.qualifier = b"common_prefix_05x".to_vec();
    let mut newer = cells[at].clone();
    newer.timestamp += 1;
    for bad in [lower, newer] {
        let mut with_bad = cells[..=at].to_vec();
        with_bad.push(bad);
        let o = opts(64 * 1024, Some(BloomType::Row));
        let (records, _) = records_of(&with_bad, &o);
        let mut w = HFileWriter::new(Vec::new(), o).unwrap();
        let err = w.append_records(&records).unwrap_err();
        assert!(
            matches!(err, FormatError::OutOfOrder { index, .. } if index == at as u64 + 1),
            "{err}"
        );
        assert_eq!(w.entry_count(), at as u64 + 1);
    }
}

#[test]
fn append_records_of_a_file_in_another_encoding_writes_the_bytes_of_append() {
    let cells: Vec<Cell> = wide_rows(120).into_iter().flatten().collect();
    for encoding in DataBlockEncoding::ALL {
        let o = WriterOptions {
            encoding,
            ..opts(1000, Some(BloomType::Row))
        };
        assert_records_write_as_append(&cells, &o, 50, encoding.name());
    }
}

#[test]
fn append_records_refuses_a_record_out_of_order_and_keeps_those_before() {
    let cells: Vec<Cell> = wide_rows(60).into_iter().flatten().collect();
    for block_size in [64, 1000, 64 * 1024] {
        let o = opts(block_size, Some(BloomType::Row));
        for bad in [5usize, 300, cells.len() - 2] {
            // Cells `bad` and `bad + 1` swapped: the one at `bad + 1` is refused when the two
            // keys differ (a swapped duplicate key is still in order).
            let mut swapped = cells.clone();
            swapped.swap(bad, bad + 1);
            if swapped[bad].as_ref().key() == swapped[bad + 1].as_ref().key() {
                continue;
            }
            let (records, starts) = records_of(&swapped, &o);
            let mut w = HFileWriter::new(Vec::new(), o.clone()).unwrap();
            let err = w.append_records(&records).unwrap_err();
            assert!(
                matches!(err, FormatError::OutOfOrder { index, .. } if index == bad as u64 + 1),
                "{err}"
            );
            assert_eq!(w.entry_count(), bad as u64 + 1);
            // The writer goes on from the refused record's successor as `append` does.
            w.append_records(&records[starts[bad + 2]..]).unwrap();
            let mut a = HFileWriter::new(Vec::new(), o.clone()).unwrap();
            for (i, c) in swapped.iter().enumerate() {
                if i != bad + 1 {
                    a.append(&c.as_ref()).unwrap();
                }
            }
            let (want, got) = (a.finish().unwrap(), w.finish().unwrap());
            assert!(
                got.0 == want.0,
                "block size {block_size}, bad {bad}: other bytes"
            );
        }
    }
}

#[test]
fn append_records_refuses_what_is_not_a_whole_record() {
    let cells: Vec<Cell> = wide_rows(10).into_iter().flatten().collect();
    let o = opts(1000, Some(BloomType::Row));
    let (records, starts) = records_of(&cells, &o);
    // Cut inside the last record: the records before it are appended, then an error naming
    // the cut record's offset.
    let cut = records.len() - 3;
    let mut w = HFileWriter::new(Vec::new(), o.clone()).unwrap();
    let err = w.append_records(&records[..cut]).unwrap_err();
    let at = starts[cells.len() - 1];
    assert!(err.to_string().contains("cell record"), "{err}");
    assert!(err.to_string().contains(&format!("offset {at}")), "{err}");
    assert_eq!(w.entry_count(), cells.len() as u64 - 1);
    // A key too short to hold a key's fixed fields (then the tags length and sequence id).
    let mut w = HFileWriter::new(Vec::new(), o.clone()).unwrap();
    let mut bad = records[..starts[3]].to_vec();
    bad.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 1, 2, 3, 4]);
    bad.extend_from_slice(&[0; 3][..2 * usize::from(o.include_tags) + usize::from(o.include_mvcc)]);
    let err = w.append_records(&bad).unwrap_err();
    assert!(err.to_string().contains("malformed cell key"), "{err}");
    assert_eq!(w.entry_count(), 3);
    // An unknown cell type in an otherwise whole record.
    let mut odd = records[..starts[2]].to_vec();
    let mut third = records[starts[2]..starts[3]].to_vec();
    let key_len = u32::from_be_bytes(third[..4].try_into().unwrap()) as usize;
    third[8 + key_len - 1] = 99;
    odd.extend_from_slice(&third);
    let mut w = HFileWriter::new(Vec::new(), o.clone()).unwrap();
    let err = w.append_records(&odd).unwrap_err();
    assert!(err.to_string().contains("unknown cell type 99"), "{err}");
    assert_eq!(w.entry_count(), 2);
}

#[test]
fn append_records_refuses_a_sequence_id_not_in_its_shortest_form() {
    let cell = Cell::put(b"row", b"f", b"q", 5, b"v");
    let o = WriterOptions {
        include_mvcc: true,
        ..opts(1000, None)
    };
    let (mut records, _) = records_of(std::slice::from_ref(&cell), &o);
    // Sequence id 0 written in two bytes (-113: one more byte follows) instead of one.
    assert_eq!(records.pop(), Some(0));
    records.extend_from_slice(&[(-113i8) as u8, 0]);
    let mut w = HFileWriter::new(Vec::new(), o).unwrap();
    let err = w.append_records(&records).unwrap_err();
    assert!(err.to_string().contains("shortest form"), "{err}");
    assert_eq!(w.entry_count(), 0);
}

mod records_props {
    use super::*;
    use crate::cell::compare_cells;
    use crate::encoding::proptests::arb_cell;
    use proptest::prelude::*;

    fn arb_case() -> impl Strategy<Value = (Vec<Cell>, WriterOptions, usize)> {
        (
            prop::sample::select(vec![&b"cf"[..], &b""[..]]),
            any::<(bool, bool)>(),
            prop::sample::select(vec![
                None,
                Some(BloomType::Row),
                Some(BloomType::RowCol),
                Some(BloomType::RowPrefixFixedLength(2)),
            ]),
            prop::sample::select(vec![16usize, 100, 400, 4096]),
            1usize..30,
        )
            .prop_flat_map(|(family, (tags, mvcc), bloom, block_size, per_call)| {
                (
                    prop::collection::vec(arb_cell(family), 0..150),
                    Just(WriterOptions {
                        include_tags: tags,
                        include_mvcc: mvcc,
                        ..opts(block_size, bloom)
                    }),
                    Just(per_call),
                )
            })
            .prop_map(|(mut cells, o, per_call)| {
                if !o.include_tags {
                    cells.iter_mut().for_each(|c| c.tags.clear());
                }
                cells.sort_by(|a, b| compare_cells(&a.as_ref(), &b.as_ref()));
                (cells, o, per_call)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        /// Any sorted cells, any layout, Bloom and block size, handed over in calls of any
        /// size: the bytes of `append`.
        #[test]
        fn append_records_writes_the_bytes_of_append((cells, o, per_call) in arb_case()) {
            assert_records_write_as_append(&cells, &o, per_call, "proptest");
        }

        /// Arbitrary bytes after valid records are taken or refused, never a panic: the
        /// valid records are all appended, and the file the writer finishes reads back with
        /// them first.
        #[test]
        fn arbitrary_records_are_errors_not_panics(
            (cells, o, _) in arb_case(),
            junk in prop::collection::vec(any::<u8>(), 0..64),
        ) {
            let (mut records, _) = records_of(&cells, &o);
            records.extend_from_slice(&junk);
            let mvcc = o.include_mvcc;
            let mut w = HFileWriter::new(Vec::new(), o).unwrap();
            let _ = w.append_records(&records);
            prop_assert!(w.entry_count() >= cells.len() as u64);
            let file = w.finish().unwrap().0;
            let reader = crate::reader::HFileReader::from_bytes(file).unwrap();
            let mut s = reader.scanner().unwrap();
            for want in &cells {
                let got = s.next().unwrap().map(|c| c.to_owned());
                // A file without MVCC stores no sequence ids.
                let want = Cell { seq_id: if mvcc { want.seq_id } else { 0 }, ..want.clone() };
                prop_assert_eq!(got, Some(want));
            }
        }
    }
}
