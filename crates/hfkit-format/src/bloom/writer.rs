//! [`BloomWriter`]: builds one compound Bloom filter (the general Bloom or the delete-family
//! Bloom) while the HFile writer appends cells. Spec: `formats/bloom.md` §"Writing" and
//! §"Meta block".
//!
//! ```text
//! per cell (before the HFile writer appends it):   writer.add(cell)
//!     skip unless a new Bloom key (ROW: row changed; ROWPREFIX: prefix changed;
//!     ROWCOL: row, family or qualifier changed; delete-family: DeleteFamily[Version] on a new row)
//!     if the current chunk holds maxKeys keys: queue it (ready)
//!     if no current chunk: start one; its index key = this Bloom key
//!     set the key's bits; keyCount += 1
//! at each data-block boundary, and with closing = true at close (InlineBlockWriter):
//!     while should_write_block(closing):      (closing also queues the partial chunk, folded)
//!         BLOOM_CHUNK payload = write_inline_block()   (the chunk's bit array)
//!         block_written(offset, onDiskSizeWithHeader, _) → chunk index entry
//! after close: meta_payload() → GENERAL_BLOOM_META / DELETE_FAMILY_BLOOM_META payload:
//!     i32 version=3 | i64 totalByteSize | i32 hashCount | i32 hashType | i64 keyCount
//!     | i64 totalMaxKeys | i32 numChunks | VInt len + comparator name
//!     | numChunks × (i64 offset | i32 onDiskSizeWithHeader | VInt len + first key)
//! ```
//!
//! # What the HFile writer does with it
//! - Create `BloomWriter::general(type, params)` when the family has a Bloom type, and
//!   `BloomWriter::delete_family(params)` unless the type is ROWCOL; register them as inline
//!   writers after the data-index writer, general first.
//! - For each cell, in HBase order: `general.add(cell)`, `delete_family.add(cell)`, then append
//!   the cell. The Bloom writers do not check cell order; the HFile writer does.
//! - At close, after the final `should_write_block(true)` loops: `general.add_file_info(fi)`
//!   (BLOOM_FILTER_TYPE, BLOOM_FILTER_PARAM, LAST_BLOOM_KEY); write each `meta_payload()` that is
//!   `Some` as a GENERAL_BLOOM_META / DELETE_FAMILY_BLOOM_META block after FILE_INFO.
//! - DELETE_FAMILY_COUNT is the HFile writer's job: HBase counts every DeleteFamily and
//!   DeleteFamilyVersion cell (not only the Bloom's new keys) and writes it even without a
//!   delete-family Bloom.

use std::collections::VecDeque;

use super::chunk::{compute_foldable_byte_size, BloomChunk, ChunkSizing};
use super::hash::HashType;
use super::key::{write_rowcol_key, BloomKind, BloomParams, BloomType, META_VERSION};
use crate::block::BlockType;
use crate::bytes::{equal_bytes, put_vlong};
use crate::cell::CellRef;
use crate::error::{FormatError, Result};
use crate::fileinfo::{keys, FileInfo};
use crate::inline::InlineBlockWriter;

/// One entry of the chunk index.
#[derive(Clone, Debug, PartialEq, Eq)]
struct IndexEntry {
    offset: u64,
    on_disk_size: u32,
    first_key: Vec<u8>,
}

/// A chunk that is complete and waits for the HFile writer to write it.
#[derive(Debug)]
struct ReadyChunk {
    first_key: Vec<u8>,
    chunk: BloomChunk,
}

/// Builds a compound Bloom filter (HBase's `CompoundBloomFilterWriter` plus the new-key rules
/// of its `BloomContext`). See the module docs for the protocol.
#[derive(Debug)]
pub struct BloomWriter {
    kind: BloomKind,
    hash_type: HashType,
    /// Sizing of the next chunk: the first from the parameters, later ones copied from the
    /// previous chunk after its fold (HBase's `createAnother`).
    next_sizing: ChunkSizing,
    chunk: Option<BloomChunk>,
    first_key_in_chunk: Vec<u8>,
    ready: VecDeque<ReadyChunk>,
    index: Vec<IndexEntry>,
    /// The last key added, and (ROWCOL) the family of the cell it came from.
    last_key: Option<Vec<u8>>,
    last_family: Vec<u8>,
    key_buf: Vec<u8>,
    total_key_count: u64,
    total_max_keys: u64,
    total_byte_size: u64,
    num_chunks: u32,
    /// Hash count of the last queued chunk (None until one is queued).
    last_hash_count: Option<u32>,
}

impl BloomWriter {
    /// The family's general Bloom filter of type `bloom_type`.
    pub fn general(bloom_type: BloomType, params: BloomParams) -> Result<BloomWriter> {
        BloomWriter::new(BloomKind::General(bloom_type), params)
    }

    /// The delete-family Bloom filter (ROW keys of DeleteFamily / DeleteFamilyVersion cells).
    pub fn delete_family(params: BloomParams) -> Result<BloomWriter> {
        BloomWriter::new(BloomKind::DeleteFamily, params)
    }

    /// A writer for either kind. Fails on parameters HBase would reject (error rate not in
    /// (0, 1), a chunk too large, or too small to hold one key).
    pub fn new(kind: BloomKind, params: BloomParams) -> Result<BloomWriter> {
        let hint_bits = (params.chunk_byte_size_hint as u64)
            .checked_mul(8)
            .ok_or_else(|| FormatError::Invalid("Bloom chunk size hint overflows".into()))?;
        // HBase rounds the hint once in the writer and again in createBySize (idempotent).
        let chunk_byte_size = compute_foldable_byte_size(hint_bits, params.max_fold)?;
        let sizing = ChunkSizing::by_size(
            chunk_byte_size,
            params.chunk_error_rate(kind),
            params.max_fold,
        )?;
        Ok(BloomWriter {
            kind,
            hash_type: params.hash_type,
            next_sizing: sizing,
            chunk: None,
            first_key_in_chunk: Vec::new(),
            ready: VecDeque::new(),
            index: Vec::new(),
            last_key: None,
            last_family: Vec::new(),
            key_buf: Vec::new(),
            total_key_count: 0,
            total_max_keys: 0,
            total_byte_size: 0,
            num_chunks: 0,
            last_hash_count: None,
        })
    }

    /// Which Bloom this is.
    pub fn kind(&self) -> BloomKind {
        self.kind
    }

    /// Offers a cell. Adds its Bloom key when it is a new key for this Bloom (module docs);
    /// returns whether it did. Cells must come in HBase order (the HFile writer checks).
    pub fn add(&mut self, cell: &CellRef<'_>) -> bool {
        self.add_in_row(cell, false)
    }

    /// [`add`](Self::add) for a caller that knows whether `cell` has the same row as the cell
    /// it offered before (the HFile writer learns that from its order check). A ROW or
    /// ROWPREFIX Bloom then skips the cell without building its key (the hot path: most cells
    /// repeat the row). `same_row = false` is always correct.
    #[inline]
    pub fn add_in_row(&mut self, cell: &CellRef<'_>, same_row: bool) -> bool {
        match self.kind {
            BloomKind::DeleteFamily if !cell.cell_type.is_delete_family_kind() => return false,
            BloomKind::General(BloomType::Row | BloomType::RowPrefixFixedLength(_))
                if same_row && self.last_key.is_some() =>
            {
                return false
            }
            _ => {}
        }
        self.add_key_of(cell)
    }

    /// Whether [`add_in_row`](Self::add_in_row) of a cell with the row of the last cell added
    /// (`same_row = true`) adds nothing, whatever the cell (a ROW or ROWPREFIX general Bloom
    /// that holds a key). A row's later cells then need no call per cell.
    #[inline]
    pub fn skips_same_row(&self) -> bool {
        matches!(
            self.kind,
            BloomKind::General(BloomType::Row | BloomType::RowPrefixFixedLength(_))
        ) && self.last_key.is_some()
    }

    /// Whether this is a general Bloom keyed by row (ROW or ROWPREFIX): once it holds a row's
    /// key, the row's later cells add nothing ([`skips_same_row`](Self::skips_same_row)).
    #[inline]
    pub fn keys_by_row(&self) -> bool {
        matches!(
            self.kind,
            BloomKind::General(BloomType::Row | BloomType::RowPrefixFixedLength(_))
        )
    }

    fn add_key_of(&mut self, cell: &CellRef<'_>) -> bool {
        let bloom_type = self.kind.bloom_type();
        // A ROW or ROWPREFIX key is a slice of the row; only ROWCOL builds one (in `key_buf`).
        let mut buf = std::mem::take(&mut self.key_buf);
        let key: &[u8] = match bloom_type {
            BloomType::Row => cell.row,
            BloomType::RowPrefixFixedLength(n) => cell.row.get(..n as usize).unwrap_or(cell.row),
            BloomType::RowCol => {
                buf.clear();
                write_rowcol_key(cell.row, cell.qualifier, &mut buf);
                &buf
            }
        };
        let same = match &self.last_key {
            None => false,
            Some(last) => {
                equal_bytes(last, key)
                    && (bloom_type != BloomType::RowCol
                        || self.last_family.as_slice() == cell.family)
            }
        };
        if !same {
            self.enqueue_ready(false);
            if self.chunk.is_none() {
                self.first_key_in_chunk.clear();
                self.first_key_in_chunk.extend_from_slice(key);
                self.chunk = Some(BloomChunk::new(self.next_sizing, self.hash_type));
                self.num_chunks += 1;
            }
            if let Some(chunk) = self.chunk.as_mut() {
                chunk.add(key);
            }
            self.total_key_count += 1;
            if bloom_type == BloomType::RowCol {
                self.last_family.clear();
                self.last_family.extend_from_slice(cell.family);
            }
            let last = self.last_key.get_or_insert_with(Vec::new);
            last.clear();
            last.extend_from_slice(key);
        }
        self.key_buf = buf;
        !same
    }

    /// Queues the current chunk when it is full, or (closing) when it holds any key; folds it.
    fn enqueue_ready(&mut self, closing: bool) {
        let ready = match &self.chunk {
            Some(c) => closing || c.is_full(),
            None => false,
        };
        if !ready {
            return;
        }
        let Some(mut chunk) = self.chunk.take() else {
            return;
        };
        chunk.fold();
        let s = chunk.sizing();
        self.total_max_keys += u64::from(s.max_keys);
        self.total_byte_size += u64::from(s.byte_size);
        self.last_hash_count = Some(s.hash_count);
        self.next_sizing = s;
        self.ready.push_back(ReadyChunk {
            first_key: std::mem::take(&mut self.first_key_in_chunk),
            chunk,
        });
    }

    /// Keys added over all chunks (the meta's keyCount; 0 means no Bloom is written).
    pub fn key_count(&self) -> u64 {
        self.total_key_count
    }

    /// The last Bloom key added (what LAST_BLOOM_KEY holds for the general Bloom).
    pub fn last_key(&self) -> Option<&[u8]> {
        self.last_key.as_deref()
    }

    /// The meta block payload, or `None` when no key was added (HBase then writes neither the
    /// meta block nor, for the general Bloom, its FileInfo keys). Call it after the HFile
    /// writer's closing `should_write_block(true)` loop, so that every chunk is indexed.
    pub fn meta_payload(&self) -> Option<Vec<u8>> {
        if self.total_key_count == 0 {
            return None;
        }
        let hash_count = self.last_hash_count?;
        let comparator = self.kind.comparator_name().as_bytes();
        let mut out = Vec::with_capacity(44 + comparator.len() + self.index.len() * 40);
        out.extend_from_slice(&META_VERSION.to_be_bytes());
        out.extend_from_slice(&(self.total_byte_size as i64).to_be_bytes());
        out.extend_from_slice(&(hash_count as i32).to_be_bytes());
        out.extend_from_slice(&self.hash_type.code().to_be_bytes());
        out.extend_from_slice(&(self.total_key_count as i64).to_be_bytes());
        out.extend_from_slice(&(self.total_max_keys as i64).to_be_bytes());
        out.extend_from_slice(&(self.num_chunks as i32).to_be_bytes());
        put_vlong(&mut out, comparator.len() as i64);
        out.extend_from_slice(comparator);
        for e in &self.index {
            out.extend_from_slice(&(e.offset as i64).to_be_bytes());
            out.extend_from_slice(&(e.on_disk_size as i32).to_be_bytes());
            put_vlong(&mut out, e.first_key.len() as i64);
            out.extend_from_slice(&e.first_key);
        }
        Some(out)
    }

    /// Writes this Bloom's FileInfo keys. General Bloom with ≥ 1 key: BLOOM_FILTER_TYPE,
    /// BLOOM_FILTER_PARAM (ROWPREFIX only, i32 prefix length) and LAST_BLOOM_KEY. The
    /// delete-family Bloom writes nothing (DELETE_FAMILY_COUNT is the HFile writer's).
    pub fn add_file_info(&self, fi: &mut FileInfo) {
        let BloomKind::General(t) = self.kind else {
            return;
        };
        let Some(last) = &self.last_key else {
            return;
        };
        fi.insert(keys::BLOOM_FILTER_TYPE, t.hbase_name().as_bytes().to_vec());
        if let BloomType::RowPrefixFixedLength(n) = t {
            fi.insert_i32(keys::BLOOM_FILTER_PARAM, n as i32);
        }
        fi.insert(keys::LAST_BLOOM_KEY, last.clone());
    }
}

impl InlineBlockWriter for BloomWriter {
    fn should_write_block(&mut self, closing: bool) -> bool {
        self.enqueue_ready(closing);
        !self.ready.is_empty()
    }

    fn block_type(&self) -> BlockType {
        BlockType::BloomChunk
    }

    fn write_inline_block(&mut self, out: &mut Vec<u8>) {
        if let Some(r) = self.ready.front_mut() {
            out.extend_from_slice(r.chunk.bits());
        }
    }

    fn block_written(
        &mut self,
        offset: u64,
        on_disk_size_with_header: u32,
        _uncompressed_size: u32,
    ) {
        if let Some(r) = self.ready.pop_front() {
            self.index.push(IndexEntry {
                offset,
                on_disk_size: on_disk_size_with_header,
                first_key: r.first_key,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bloom::reader::{BloomQuery, BloomReader};
    use crate::bloom::test_support::{bloom_fixtures, options, read_bloom_file};
    use crate::cell::{Cell, CellType};
    use crate::text::parse_cell_line;

    /// Drives `w` like the HFile writer would, writing chunks into a fake file; returns
    /// the chunk payloads with their fake offsets.
    fn drain(w: &mut BloomWriter, closing: bool, file: &mut Vec<(u64, Vec<u8>)>) {
        while w.should_write_block(closing) {
            let mut p = Vec::new();
            w.write_inline_block(&mut p);
            let off = 1000 * (file.len() as u64 + 1);
            let len = p.len() as u32;
            file.push((off, p));
            w.block_written(off, len + 33 + 4, len);
        }
    }

    fn put(row: &[u8], q: &[u8]) -> Cell {
        Cell::put(row, b"f", q, 1, b"v")
    }

    #[test]
    fn new_key_rules() {
        let cells = [
            put(b"a", b"1"),
            put(b"a", b"1"),
            put(b"a", b"2"),
            put(b"b", b"1"),
        ];
        let mut row = BloomWriter::general(BloomType::Row, BloomParams::default()).unwrap();
        let mut rc = BloomWriter::general(BloomType::RowCol, BloomParams::default()).unwrap();
        for c in &cells {
            row.add(&c.as_ref());
            rc.add(&c.as_ref());
        }
        assert_eq!(row.key_count(), 2);
        assert_eq!(rc.key_count(), 3);
        let mut df = BloomWriter::delete_family(BloomParams::default()).unwrap();
        let mut d1 = put(b"a", b"");
        d1.cell_type = crate::cell::CellTypeOwned(CellType::DeleteFamily);
        let mut d2 = d1.clone();
        d2.cell_type = crate::cell::CellTypeOwned(CellType::DeleteFamilyVersion);
        let mut d3 = put(b"b", b"x");
        d3.cell_type = crate::cell::CellTypeOwned(CellType::DeleteColumn);
        for c in [&d1, &d2, &d3, &put(b"c", b"")] {
            df.add(&c.as_ref());
        }
        assert_eq!(df.key_count(), 1);
        let mut none = BloomWriter::delete_family(BloomParams::default()).unwrap();
        assert!(!none.should_write_block(true));
        assert_eq!(none.meta_payload(), None);
        let mut fi = FileInfo::new();
        none.add_file_info(&mut fi);
        assert!(fi.entries.is_empty());
    }

    #[test]
    fn chunks_fill_then_fold_at_close() {
        let params = BloomParams {
            chunk_byte_size_hint: 256,
            ..BloomParams::default()
        };
        let mut w = BloomWriter::general(BloomType::Row, params).unwrap();
        let mut file = Vec::new();
        let rows: Vec<Vec<u8>> = (0..500).map(|i| format!("r{i:04}").into_bytes()).collect();
        for r in &rows {
            w.add(&put(r, b"q").as_ref());
            drain(&mut w, false, &mut file);
        }
        drain(&mut w, true, &mut file);
        // 256-byte chunks hold 213 keys: 213 + 213 + 74 (last folded to 128 bytes).
        assert_eq!(
            file.iter().map(|(_, p)| p.len()).collect::<Vec<_>>(),
            [256, 256, 128]
        );
        let meta = w.meta_payload().unwrap();
        let reader = BloomReader::from_meta(&meta, 0, BloomKind::General(BloomType::Row)).unwrap();
        assert_eq!(reader.meta().num_chunks, 3);
        assert_eq!(reader.meta().key_count, 500);
        assert_eq!(reader.meta().max_keys, 213 + 213 + 106);
        let mut load = |off: u64, _size: u32| -> Result<Vec<u8>> {
            Ok(file.iter().find(|(o, _)| *o == off).unwrap().1.clone())
        };
        for r in &rows {
            assert!(reader
                .might_contain(BloomQuery::Row(r), w.last_key(), &mut load)
                .unwrap());
        }
        assert!(!reader
            .might_contain(BloomQuery::Row(b"r9999"), w.last_key(), &mut load)
            .unwrap());
        assert!(!reader
            .might_contain(BloomQuery::Row(b"a"), w.last_key(), &mut load)
            .unwrap());
    }

    #[test]
    fn row_bloom_rules_out_absent_rows() {
        let mut w = BloomWriter::general(BloomType::Row, BloomParams::default()).unwrap();
        let mut file = Vec::new();
        let n = 12_000;
        for i in 0..n {
            w.add(&put(format!("user{:08}", i * 2).as_bytes(), b"q").as_ref());
            drain(&mut w, false, &mut file);
        }
        drain(&mut w, true, &mut file);
        let meta = w.meta_payload().unwrap();
        let reader = BloomReader::from_meta(&meta, 0, BloomKind::General(BloomType::Row)).unwrap();
        let mut load = |off: u64, _size: u32| -> Result<Vec<u8>> {
            Ok(file.iter().find(|(o, _)| *o == off).unwrap().1.clone())
        };
        let mut maybe = 0;
        let absent = 10_000;
        for i in 0..absent {
            // Odd numbers interleave with the present rows, so none is ruled out by range.
            let row = format!("user{:08}", i * 2 + 1);
            if reader
                .might_contain(BloomQuery::Row(row.as_bytes()), w.last_key(), &mut load)
                .unwrap()
            {
                maybe += 1;
            }
        }
        let ruled_out = 1.0 - maybe as f64 / absent as f64;
        assert!(ruled_out >= 0.98, "ruled out only {ruled_out}");
    }

    /// Feeds the writer and checks its chunks and meta against the file's. The writer is given
    /// the file's real chunk offsets and on-disk sizes through `block_written`, so the whole
    /// meta payload, index included, must equal HBase's byte for byte.
    fn check_writer_against(
        name: &str,
        mut w: BloomWriter,
        cells: &[Cell],
        meta: &(u64, Vec<u8>),
        chunks: &std::collections::BTreeMap<u64, (u32, Vec<u8>)>,
    ) -> usize {
        let reader = BloomReader::from_meta(&meta.1, meta.0, w.kind()).unwrap();
        let locs = reader.chunks().to_vec();
        let mut written = 0usize;
        let mut step = |w: &mut BloomWriter, closing: bool| {
            while w.should_write_block(closing) {
                let mut p = Vec::new();
                w.write_inline_block(&mut p);
                let loc = locs
                    .get(written)
                    .unwrap_or_else(|| panic!("{name}: more chunks than HBase wrote"));
                let (size, want) = &chunks[&loc.offset];
                assert_eq!(
                    *size, loc.on_disk_size,
                    "{name}: index size of chunk {written}"
                );
                assert!(
                    p == *want,
                    "{name}: chunk {written} bits differ ({} vs {} bytes)",
                    p.len(),
                    want.len()
                );
                w.block_written(loc.offset, loc.on_disk_size, p.len() as u32);
                written += 1;
            }
        };
        for c in cells {
            w.add(&c.as_ref());
            step(&mut w, false);
        }
        step(&mut w, true);
        assert_eq!(written, locs.len(), "{name}: chunk count");
        assert!(
            w.meta_payload().unwrap() == meta.1,
            "{name}: {:?} meta payload differs",
            w.kind()
        );
        written
    }

    #[test]
    fn writer_matches_hbase_byte_for_byte() {
        let Some((dir, names)) = bloom_fixtures("writer_matches_hbase_byte_for_byte") else {
            return;
        };
        let mut files = 0;
        let mut total_chunks = 0;
        for name in &names {
            let opts = options(&dir, name);
            let bloom_type = BloomType::parse(&match opts["bloom"].as_str() {
                "ROWPREFIX_FIXED_LENGTH" => format!("rowprefix:{}", opts["bloom_prefix_len"]),
                other => other.to_string(),
            })
            .unwrap()
            .unwrap();
            let params = BloomParams {
                chunk_byte_size_hint: opts["bloom_block_size"].parse().unwrap(),
                ..BloomParams::default()
            };
            let bytes = std::fs::read(dir.join(format!("{name}.hfile"))).unwrap();
            let file = read_bloom_file(&bytes);
            let cells: Vec<Cell> = std::fs::read_to_string(dir.join(format!("{name}.cells.txt")))
                .unwrap()
                .lines()
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(|l| parse_cell_line(l).unwrap())
                .collect();
            let general = BloomWriter::general(bloom_type, params).unwrap();
            let meta = file
                .general_meta
                .as_ref()
                .unwrap_or_else(|| panic!("{name}: no general Bloom meta"));
            let mut chunk_count = check_writer_against(name, general, &cells, meta, &file.chunks);
            // FileInfo keys.
            let mut w = BloomWriter::general(bloom_type, params).unwrap();
            cells.iter().for_each(|c| {
                w.add(&c.as_ref());
            });
            let mut fi = FileInfo::new();
            w.add_file_info(&mut fi);
            for key in [
                keys::BLOOM_FILTER_TYPE,
                keys::BLOOM_FILTER_PARAM,
                keys::LAST_BLOOM_KEY,
            ] {
                assert_eq!(
                    fi.get(key),
                    file.file_info.get(key),
                    "{name}: FileInfo {key}"
                );
            }
            let has_df = cells.iter().any(|c| c.cell_type().is_delete_family_kind());
            if bloom_type != BloomType::RowCol && has_df {
                let meta = file
                    .delete_family_meta
                    .as_ref()
                    .unwrap_or_else(|| panic!("{name}: no DF Bloom meta"));
                let df = BloomWriter::delete_family(params).unwrap();
                chunk_count += check_writer_against(name, df, &cells, meta, &file.chunks);
            } else {
                assert!(
                    file.delete_family_meta.is_none(),
                    "{name}: unexpected DF Bloom"
                );
            }
            assert_eq!(
                chunk_count,
                file.chunks.len(),
                "{name}: every BLOOM_CHUNK accounted for"
            );
            files += 1;
            total_chunks += chunk_count;
        }
        eprintln!("writer matched HBase on {files} files, {total_chunks} chunks");
        assert!(files >= 40, "only {files} fixtures");
    }
}
