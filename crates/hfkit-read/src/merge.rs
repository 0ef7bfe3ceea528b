//! K-way merge of a store's files in HBase cell order (HBase's `KeyValueHeap`).
//!
//! Order: the cell comparator (row ↑, family ↑, qualifier ↑, timestamp ↓, type ↓), then the
//! cell's sequence id ↓ (every cell of a store file carries the file's sequence id, as HBase
//! does for bulk-loaded files, whatever MVCC is stored in the cell; a file given
//! [`super::CELL_SEQ_IDS`] keeps the MVCC stored in each cell, as HBase reads the files it
//! flushed or compacted), then source position ↓ (a later file wins a remaining tie, as
//! HBase's scanner order does).
//!
//! Each source keeps its current cell inside its own [`Scanner`] (a view into the decoded
//! block); the heap holds source indices only, so merging allocates nothing per cell. The winner
//! is read through [`MergeScanner::peek`] and the caller copies only what it keeps.
//!
//! The source holding the smallest cell is kept outside the heap (`top`), as the import's
//! run merge does: after its cell is taken it advances and stays on top while its next cell
//! still comes before the heap's smallest, one comparison where a sift from the root makes two
//! per level. A store's files hold rows of many cells each, so most cells stay.

use std::cmp::Ordering;

use hfkit_format::cell::{compare_cells, CellRef};
use hfkit_format::reader::{HFileReader, Scanner};

use super::ReadError;

struct Source<'r> {
    scanner: Scanner<'r>,
    seq_id: u64,
    /// Position among the sources: a later source wins ties of equal sequence ids.
    order: usize,
    label: String,
    live: bool,
    /// The first 16 bytes of the current cell's row, zero-padded, big-endian: two sources whose
    /// prefixes differ order as their prefixes do (a shorter row that the other's prefix extends
    /// pads with zeros, so it sorts first, as in the row order), without reading either cell.
    row_prefix: u128,
}

impl Source<'_> {
    /// Records whether the scanner is on a cell, and that cell's row prefix.
    #[inline(always)]
    fn set_live(&mut self, live: bool) {
        (self.live, self.row_prefix) = match self.scanner.current() {
            Some(c) if live => (true, row_prefix(c.row)),
            _ => (false, 0),
        };
    }

    #[inline(always)]
    fn current(&self) -> Option<CellRef<'_>> {
        if !self.live {
            return None;
        }
        let c = self.scanner.current()?;
        // The cell built once with its sequence id: setting the field on the built cell made
        // the compiler copy the whole cell through the stack, each 16-byte reload waiting on
        // two 8-byte stores (no store-to-load forwarding): a table scan at 13.3M cells/s
        // against 14.0M (`benches/read_bench.sh`, AMD EPYC).
        let seq_id = match self.seq_id {
            super::CELL_SEQ_IDS => c.seq_id,
            file => file,
        };
        Some(CellRef { seq_id, ..c })
    }
}

/// `row`'s first 16 bytes, zero-padded, as a big-endian number.
#[inline(always)]
fn row_prefix(row: &[u8]) -> u128 {
    let mut b = [0u8; 16];
    let n = row.len().min(16);
    b[..n].copy_from_slice(&row[..n]);
    u128::from_be_bytes(b)
}

/// A name for a file in error messages: its path, or its position for in-memory files.
pub fn file_label(reader: &HFileReader, index: usize) -> String {
    match reader.path() {
        Some(p) => p.display().to_string(),
        None => format!("<in-memory store file #{index}>"),
    }
}

/// Merges the cells of several files of one store.
pub struct MergeScanner<'r> {
    sources: Vec<Source<'r>>,
    /// The live source whose cell comes first; `None` when every source is exhausted.
    top: Option<usize>,
    /// Binary min-heap of the other live sources' indices, by [`MergeScanner::less`].
    heap: Vec<usize>,
}

impl<'r> MergeScanner<'r> {
    /// A merge over `(file, sequence id)` pairs, positioned nowhere: call
    /// [`MergeScanner::seek_to_first`] or [`MergeScanner::seek`] before reading.
    pub fn new<I>(files: I) -> Result<MergeScanner<'r>, ReadError>
    where
        I: IntoIterator<Item = (&'r HFileReader, u64)>,
    {
        let mut sources = Vec::new();
        for (order, (reader, seq_id)) in files.into_iter().enumerate() {
            let label = file_label(reader, order);
            let scanner = reader.scanner().map_err(|e| ReadError::format(&label, e))?;
            sources.push(Source {
                scanner,
                seq_id,
                order,
                label,
                live: false,
                row_prefix: 0,
            });
        }
        Ok(MergeScanner {
            sources,
            top: None,
            heap: Vec::new(),
        })
    }

    /// Number of sources.
    pub fn len(&self) -> usize {
        self.sources.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// Positions every source on its first cell.
    pub fn seek_to_first(&mut self) -> Result<(), ReadError> {
        for s in &mut self.sources {
            let live = s
                .scanner
                .next()
                .map_err(|e| ReadError::format(&s.label, e))?
                .is_some();
            s.set_live(live);
        }
        self.rebuild();
        Ok(())
    }

    /// Positions every source on its first cell whose key is ≥ `key` (a flat key, e.g.
    /// [`hfkit_format::cell::first_on_row`]).
    pub fn seek(&mut self, key: &[u8]) -> Result<(), ReadError> {
        for s in &mut self.sources {
            let live = s
                .scanner
                .seek(key)
                .map_err(|e| ReadError::format(&s.label, e))?
                .is_some();
            s.set_live(live);
        }
        self.rebuild();
        Ok(())
    }

    /// The next cell in merge order (its `seq_id` is the file's, or its own for a file given
    /// [`super::CELL_SEQ_IDS`]), without consuming it. Always inlined: a cell handed back
    /// through memory by a call costs the copy and its reloads.
    #[inline(always)]
    pub fn peek(&self) -> Option<CellRef<'_>> {
        self.sources.get(self.top?)?.current()
    }

    /// The file the next cell comes from (for error messages).
    pub fn peek_label(&self) -> Option<&str> {
        self.sources.get(self.top?).map(|s| s.label.as_str())
    }

    /// Consumes the cell [`MergeScanner::peek`] returns.
    pub fn advance(&mut self) -> Result<(), ReadError> {
        let Some(top) = self.top else {
            return Ok(());
        };
        let Some(s) = self.sources.get_mut(top) else {
            return Ok(());
        };
        let live = s
            .scanner
            .advance()
            .map_err(|e| ReadError::format(&s.label, e))?;
        if self.heap.is_empty() {
            // A lone source (a store of one file, or the last one left) is compared with
            // nothing until the next seek, which sets every source's prefix again.
            s.live = live;
            if !live {
                self.top = None;
            }
            return Ok(());
        }
        s.set_live(live);
        if !s.live {
            self.top = self.pop();
        } else if let Some(&next) = self.heap.first() {
            if Self::less(&self.sources, next, top) {
                // The heap's smallest goes on top; `top` takes its place at the root and sinks.
                self.top = Some(next);
                self.heap[0] = top;
                self.sift_down(0);
            }
        }
        Ok(())
    }

    fn rebuild(&mut self) {
        self.heap.clear();
        self.heap
            .extend((0..self.sources.len()).filter(|&i| self.sources[i].live));
        for i in (0..self.heap.len() / 2).rev() {
            self.sift_down(i);
        }
        self.top = self.pop();
    }

    /// Takes the heap's smallest source out of it.
    fn pop(&mut self) -> Option<usize> {
        if self.heap.is_empty() {
            return None;
        }
        let smallest = self.heap.swap_remove(0);
        self.sift_down(0);
        Some(smallest)
    }

    /// Whether source `a`'s current cell comes before source `b`'s.
    #[inline(always)]
    fn less(sources: &[Source<'_>], a: usize, b: usize) -> bool {
        let (sa, sb) = (&sources[a], &sources[b]);
        // Only live sources are compared; their rows' prefixes decide most comparisons.
        if sa.row_prefix != sb.row_prefix && sa.live && sb.live {
            return sa.row_prefix < sb.row_prefix;
        }
        let ord = match (sa.current(), sb.current()) {
            (Some(x), Some(y)) => compare_cells(&x, &y)
                .then_with(|| y.seq_id.cmp(&x.seq_id))
                .then_with(|| sb.order.cmp(&sa.order)),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => sb.order.cmp(&sa.order),
        };
        ord == Ordering::Less
    }

    fn sift_down(&mut self, i: usize) {
        let sources = &self.sources;
        hfkit_format::heap::sift_down(&mut self.heap, i, |a, b| Self::less(sources, a, b));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hfkit_format::cell::{Cell, CellType, CellTypeOwned};
    use hfkit_format::writer::{HFileWriter, WriterOptions};

    fn file(cells: &[Cell]) -> HFileReader {
        let mut w = HFileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
        for c in cells {
            w.append(&c.as_ref()).unwrap();
        }
        let (bytes, _) = w.finish().unwrap();
        HFileReader::from_bytes(bytes).unwrap()
    }

    fn cell(row: &str, q: &str, ts: i64, t: CellType, v: &str) -> Cell {
        Cell {
            cell_type: CellTypeOwned(t),
            ..Cell::put(row.as_bytes(), b"f", q.as_bytes(), ts, v.as_bytes())
        }
    }

    /// `row/qualifier/timestamp/type/value`.
    fn line(c: &CellRef<'_>) -> String {
        format!(
            "{}/{}/{}/{}/{}",
            String::from_utf8_lossy(c.row),
            String::from_utf8_lossy(c.qualifier),
            c.timestamp,
            c.cell_type.name(),
            String::from_utf8_lossy(c.value)
        )
    }

    fn drain(m: &mut MergeScanner<'_>) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        while let Some(c) = m.peek() {
            out.push((line(&c), c.seq_id));
            m.advance().unwrap();
        }
        out
    }

    #[test]
    fn merges_in_order_with_newer_sequence_first() {
        let a = file(&[
            cell("a", "q", 5, CellType::Put, "a5"),
            cell("b", "q", 3, CellType::Put, "old"),
        ]);
        let b = file(&[
            cell("a", "q", 5, CellType::Delete, ""),
            cell("b", "q", 3, CellType::Put, "new"),
            cell("c", "", 1, CellType::DeleteFamily, ""),
        ]);
        let empty = file(&[]);
        let mut m = MergeScanner::new([(&a, 1), (&b, 7), (&empty, 9)]).unwrap();
        m.seek_to_first().unwrap();
        let got = drain(&mut m);
        assert_eq!(
            got,
            vec![
                ("a/q/5/Delete/".to_string(), 7),
                ("a/q/5/Put/a5".to_string(), 1),
                ("b/q/3/Put/new".to_string(), 7),
                ("b/q/3/Put/old".to_string(), 1),
                ("c//1/DeleteFamily/".to_string(), 7),
            ]
        );
        m.seek(&hfkit_format::cell::first_on_row(b"b")).unwrap();
        assert_eq!(drain(&mut m).len(), 3);
        m.seek(&hfkit_format::cell::first_on_row(b"d")).unwrap();
        assert!(m.peek().is_none());
    }

    #[test]
    fn cell_sequence_ids_order_ties_and_are_kept() {
        let with_seq = |mut c: Cell, seq: u64| {
            c.seq_id = seq;
            c
        };
        // HBase-flushed files: each cell keeps its MVCC, which decides ties across files
        // whatever the files' order.
        let newer_first = file(&[
            with_seq(cell("a", "q", 5, CellType::Put, "late"), 30),
            with_seq(cell("b", "q", 1, CellType::Put, "b"), 31),
        ]);
        let older = file(&[with_seq(cell("a", "q", 5, CellType::Put, "early"), 10)]);
        let cells = crate::CELL_SEQ_IDS;
        let mut m = MergeScanner::new([(&newer_first, cells), (&older, cells)]).unwrap();
        m.seek_to_first().unwrap();
        assert_eq!(
            drain(&mut m),
            vec![
                ("a/q/5/Put/late".to_string(), 30),
                ("a/q/5/Put/early".to_string(), 10),
                ("b/q/1/Put/b".to_string(), 31),
            ]
        );
        // A bulk-load sequence id still overrides the stored MVCC.
        let mut m = MergeScanner::new([(&newer_first, 1), (&older, cells)]).unwrap();
        m.seek_to_first().unwrap();
        assert_eq!(drain(&mut m)[0], ("a/q/5/Put/early".to_string(), 10));
    }

    proptest::proptest! {
        /// The merge hands out every cell of every file, in the order of a plain sort of them
        /// all by the cell comparator, then sequence id ↓, then file position ↓; a seek lands
        /// on the first of them at or after its key.
        #[test]
        fn merge_equals_a_plain_sort(
            files in proptest::collection::vec(
                proptest::collection::vec(
                    (0usize..3, 0u8..6, 0u8..3, 0i64..4, proptest::bool::ANY),
                    0..40,
                ),
                1..6,
            ),
            seqs in proptest::collection::vec(0u64..4, 6),
            seek_row in 0u8..7,
        ) {
            let mut readers = Vec::new();
            let mut all = Vec::new();
            for (f, cells) in files.iter().enumerate() {
                let mut cells: Vec<Cell> = cells
                    .iter()
                    .map(|&(p, r, q, ts, del)| {
                        // Rows shorter and longer than the 16-byte prefix the merge compares
                        // first, some sharing all 16.
                        let p = ["", "0123456789abcdef", "0123456789abcde"][p];
                        let t = if del { CellType::Delete } else { CellType::Put };
                        cell(&format!("{p}r{r}"), &format!("q{q}"), ts, t, &format!("{f}"))
                    })
                    .collect();
                cells.sort_by(|a, b| compare_cells(&a.as_ref(), &b.as_ref()));
                cells.dedup_by(|a, b| compare_cells(&a.as_ref(), &b.as_ref()) == Ordering::Equal);
                for c in &cells {
                    all.push((c.clone(), seqs[f], f));
                }
                readers.push(file(&cells));
            }
            all.sort_by(|(a, sa, fa), (b, sb, fb)| {
                compare_cells(&a.as_ref(), &b.as_ref())
                    .then_with(|| sb.cmp(sa))
                    .then_with(|| fb.cmp(fa))
            });
            let want: Vec<(String, u64)> = all
                .iter()
                .map(|(c, s, _)| (line(&c.as_ref()), *s))
                .collect();
            let mut m =
                MergeScanner::new(readers.iter().zip(&seqs).map(|(r, &s)| (r, s))).unwrap();
            m.seek_to_first().unwrap();
            proptest::prop_assert_eq!(drain(&mut m), want.clone());
            let key = hfkit_format::cell::first_on_row(format!("r{seek_row}").as_bytes());
            m.seek(&key).unwrap();
            let from = all
                .iter()
                .position(|(c, _, _)| c.row.as_slice() >= format!("r{seek_row}").as_bytes())
                .unwrap_or(all.len());
            proptest::prop_assert_eq!(drain(&mut m), want[from..].to_vec());
        }
    }
}
