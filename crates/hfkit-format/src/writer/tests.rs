//! `append_row` against `append`: the same bytes over wide rows (the row path's run loop, its
//! block cuts, Blooms, statistics), and the same refusals.

use super::*;
use crate::bloom::BloomType;
use crate::cell::{Cell, CellTypeOwned};
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

#[test]
fn append_row_writes_the_bytes_of_append_on_wide_rows() {
    let rows = wide_rows(300);
    for block_size in [64, 300, 1000, 4096, 64 * 1024] {
        for bloom in [
            None,
            Some(BloomType::Row),
            Some(BloomType::RowCol),
            Some(BloomType::RowPrefixFixedLength(4)),
        ] {
            // Every layout of the records: tags and MVCC fields present or not.
            for (include_tags, include_mvcc) in
                [(true, true), (true, false), (false, true), (false, false)]
            {
                let o = WriterOptions {
                    include_tags,
                    include_mvcc,
                    ..opts(block_size, bloom)
                };
                let rows: Vec<Vec<Cell>> = rows
                    .iter()
                    .map(|r| {
                        r.iter()
                            .filter(|c| include_tags || c.tags.is_empty())
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
                    let case = format!(
                        "block size {block_size}, {bloom:?}, tags {include_tags}, mvcc {include_mvcc}, {how}"
                    );
                    assert_eq!(got.1, want.1, "{case}");
                    assert!(got.0 == want.0, "{case}: other bytes");
                }
            }
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
