//! The borrowed rows of a scan (`formats/read.md` §"Get and Scan"): [`RowBuf`], one reused buffer
//! that holds the cells a row returns, and [`RowRef`], the row seen through it.
//!
//! A store file's cells live in its scanner's decoded block, which the next block replaces, and
//! the merge moves on from a cell as soon as the matcher has judged it; so a row's cells are
//! copied once, as the matcher includes them, into one byte buffer kept for the whole scan
//! (row key once per row, the other fields one after another). After the first rows it no
//! longer grows, so a scan allocates nothing per cell; [`RowRef::to_row`] makes the owned
//! [`Row`] for callers that keep rows.

use hfkit_format::bytes::extend_pieces;
use hfkit_format::cell::{Cell, CellRef, CellType};

use super::Row;

/// Where one cell's fields sit in [`RowBuf::data`]: family `start..family_end`, qualifier
/// `family_end..qualifier_end`, value `qualifier_end..value_end`, tags `value_end..tags_end`.
#[derive(Clone, Copy, Debug)]
struct Slot {
    start: usize,
    family_end: usize,
    qualifier_end: usize,
    value_end: usize,
    tags_end: usize,
    timestamp: i64,
    cell_type: CellType,
    seq_id: u64,
}

/// One row's returned cells, copied out of the decoded blocks into buffers reused from row to
/// row.
///
/// Invariant (what [`RowRef`] relies on to slice `data` without checks): `slots` are added
/// only by [`RowBuf::push`], which appends the cell's fields to `data` at the slot's ranges,
/// and `data` is cleared only with `slots` ([`RowBuf::start_row`]).
#[derive(Debug, Default)]
pub struct RowBuf {
    row: Vec<u8>,
    data: Vec<u8>,
    slots: Vec<Slot>,
}

impl RowBuf {
    pub fn new() -> RowBuf {
        RowBuf::default()
    }

    /// Empties the buffer for the row `row` (its capacity is kept).
    pub fn start_row(&mut self, row: &[u8]) {
        self.row.clear();
        self.row.extend_from_slice(row);
        self.data.clear();
        self.slots.clear();
    }

    /// Appends a cell of the current row (its row key is the one given to
    /// [`RowBuf::start_row`]; the cell's own is not copied again).
    #[inline]
    pub fn push(&mut self, c: &CellRef<'_>) {
        debug_assert_eq!(c.row, self.row.as_slice());
        let d = &mut self.data;
        let start = d.len();
        let family_end = start + c.family.len();
        let qualifier_end = family_end + c.qualifier.len();
        let value_end = qualifier_end + c.value.len();
        extend_pieces(d, [c.family, c.qualifier, c.value, c.tags]);
        self.slots.push(Slot {
            start,
            family_end,
            qualifier_end,
            value_end,
            tags_end: d.len(),
            timestamp: c.timestamp,
            cell_type: c.cell_type,
            seq_id: c.seq_id,
        });
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The row as borrowed cells.
    pub fn as_row_ref(&self) -> RowRef<'_> {
        RowRef { buf: self }
    }
}

/// A row of a scan whose cells borrow from the scanner's [`RowBuf`]: valid until the scanner
/// moves on. Cells in the order of [`Row::cells`].
#[derive(Clone, Copy, Debug)]
pub struct RowRef<'a> {
    buf: &'a RowBuf,
}

impl<'a> RowRef<'a> {
    /// The row key.
    pub fn row(&self) -> &'a [u8] {
        &self.buf.row
    }

    /// Number of cells (at least one for a row a scan returns).
    pub fn len(&self) -> usize {
        self.buf.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.slots.is_empty()
    }

    /// Cell `i` (families in byte order, then cell order), `None` past the end. Always
    /// inlined, as `slot_cell`: a cell handed back through memory by a call costs its copy.
    #[inline(always)]
    pub fn cell(&self, i: usize) -> Option<CellRef<'a>> {
        self.buf.slots.get(i).map(|s| self.slot_cell(s))
    }

    /// The cell of slot `s`, its four slices taken without bounds checks: an export decodes
    /// every cell of every row through here, and the checks cost it 16% of its decoding
    /// (`benches/export_bench.sh`).
    #[inline(always)]
    fn slot_cell(&self, s: &Slot) -> CellRef<'a> {
        let buf: &'a RowBuf = self.buf;
        let data: &'a [u8] = &buf.data;
        debug_assert!(
            s.start <= s.family_end
                && s.family_end <= s.qualifier_end
                && s.qualifier_end <= s.value_end
                && s.value_end <= s.tags_end
                && s.tags_end <= data.len()
        );
        // SAFETY: `RowBuf`'s invariant: a slot is pushed only by `push`, after the cell's
        // fields were appended to `data` at exactly its ranges (in order, ending at the
        // length of `data` then), and `data` is only ever cleared together with `slots`
        // (`start_row`); so every slot's ranges are in order and within `data`.
        let field = |a: usize, b: usize| unsafe { data.get_unchecked(a..b) };
        CellRef {
            row: &buf.row,
            family: field(s.start, s.family_end),
            qualifier: field(s.family_end, s.qualifier_end),
            timestamp: s.timestamp,
            cell_type: s.cell_type,
            value: field(s.qualifier_end, s.value_end),
            tags: field(s.value_end, s.tags_end),
            seq_id: s.seq_id,
        }
    }

    /// The cells in order.
    pub fn cells(&self) -> impl ExactSizeIterator<Item = CellRef<'a>> + 'a {
        let r = *self;
        r.buf.slots.iter().map(move |s| r.slot_cell(s))
    }

    /// An owned copy.
    pub fn to_row(&self) -> Row {
        Row {
            row: self.buf.row.clone(),
            cells: self.cells().map(|c| c.to_owned()).collect::<Vec<Cell>>(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_come_back_as_pushed_and_the_buffer_is_reused() {
        let mut b = RowBuf::new();
        let mut del = Cell::put(b"r1", b"f", b"q", 7, b"");
        del.cell_type = hfkit_format::cell::CellTypeOwned(CellType::DeleteColumn);
        let cells = [
            Cell::put(b"r1", b"a", b"", 9, b"value"),
            del,
            Cell {
                tags: vec![0, 2, 8, 1],
                seq_id: 42,
                ..Cell::put(b"r1", b"f", b"q", 5, b"v5")
            },
        ];
        b.start_row(b"r1");
        for c in &cells {
            b.push(&c.as_ref());
        }
        let r = b.as_row_ref();
        assert_eq!((r.row(), r.len()), (&b"r1"[..], 3));
        let back: Vec<Cell> = r.cells().map(|c| c.to_owned()).collect();
        assert_eq!(back, cells);
        assert_eq!(
            r.to_row(),
            Row {
                row: b"r1".to_vec(),
                cells: cells.to_vec()
            }
        );
        assert!(r.cell(3).is_none());
        let cap = b.data.capacity();
        b.start_row(b"r2");
        assert!(b.as_row_ref().is_empty());
        b.push(&Cell::put(b"r2", b"f", b"q", 1, b"x").as_ref());
        assert_eq!(b.as_row_ref().cell(0).map(|c| c.value), Some(&b"x"[..]));
        assert_eq!(b.data.capacity(), cap, "the buffer keeps its capacity");
    }
}
