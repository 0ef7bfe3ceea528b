//! The multi-level data block index and the meta index. Spec: `formats/hfile.md` §"Block index".
//!
//! ```text
//! root format (ROOT_INDEX payload; also the Bloom chunk index):
//!   repeat n: i64 blockOffset | i32 onDiskSizeWithHeader | VInt keyLen | key
//!   [i64 midLeafOffset | i32 midLeafOnDiskSize | i32 midKeyIndexInLeaf]  data root, ≥ 2 levels only
//! non-root format (LEAF_INDEX, INTERMEDIATE_INDEX payload):
//!   i32 n | i32 secondary[n + 1] (entry offsets after this array; last = total) |
//!   repeat n: i64 blockOffset | i32 onDiskSizeWithHeader | key
//! ```
//!
//! Leaf entries point at data blocks and carry HBase's shortened "midpoint" keys
//! ([`midpoint_key`]); upper levels carry the first key of the child block. Leaf chunks are
//! written inline when they reach `max_chunk_size` bytes (non-root size); at close the root is
//! split into intermediate levels while it is larger than `max_chunk_size` and has more than
//! `min_entries` entries.

use std::cmp::Ordering;

use super::block::BlockType;
use super::bytes::{put_vlong, vlong_size, Cursor};
use super::cell::{compare_flat_keys, write_key_parts, CellType, KeyView, LATEST_TIMESTAMP};
use super::error::{FormatError, Result};
use super::inline::InlineBlockWriter;

/// `hfile.index.block.max.size`.
pub const DEFAULT_MAX_CHUNK_SIZE: usize = 128 * 1024;
/// `hfile.index.block.min.entries`.
pub const DEFAULT_MIN_ENTRIES: usize = 16;
/// Size of the mid-key metadata after a multi-level root: i64 + i32 + i32.
pub const MID_KEY_METADATA_SIZE: usize = 8 + 4 + 4;
/// Bytes of a non-root entry besides its key: i64 offset + i32 size.
const NON_ROOT_ENTRY_OVERHEAD: usize = 8 + 4;
/// Deepest index HBase builds.
pub const MAX_LEVELS: u32 = 16;

/// One index entry: a block and its (possibly shortened) key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexEntry {
    pub offset: u64,
    pub on_disk_size: u32,
    pub key: Vec<u8>,
}

/// A chunk of index entries being built (HBase's `BlockIndexChunkImpl`).
#[derive(Clone, Debug, Default)]
pub struct IndexChunk {
    pub entries: Vec<IndexEntry>,
    /// Cumulative count of data blocks under each entry (root chunk of a multi-level index).
    sub_entries_at: Vec<u64>,
    non_root_entries_size: usize,
    root_size: usize,
}

impl IndexChunk {
    pub fn add(&mut self, key: Vec<u8>, offset: u64, on_disk_size: u32, sub_entries: Option<u64>) {
        self.non_root_entries_size += NON_ROOT_ENTRY_OVERHEAD + key.len();
        self.root_size += 8 + 4 + vlong_size(key.len() as i64) + key.len();
        if let Some(n) = sub_entries {
            self.sub_entries_at.push(n);
        }
        self.entries.push(IndexEntry {
            offset,
            on_disk_size,
            key,
        });
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Payload size in non-root format.
    pub fn non_root_size(&self) -> usize {
        4 + 4 * (self.entries.len() + 1) + self.non_root_entries_size
    }

    /// Payload size in root format (without mid-key metadata).
    pub fn root_size(&self) -> usize {
        self.root_size
    }

    fn clear(&mut self) {
        *self = IndexChunk::default();
    }

    /// Appends the chunk in root format.
    pub fn write_root(&self, out: &mut Vec<u8>) {
        for e in &self.entries {
            out.extend_from_slice(&e.offset.to_be_bytes());
            out.extend_from_slice(&e.on_disk_size.to_be_bytes());
            put_vlong(out, e.key.len() as i64);
            out.extend_from_slice(&e.key);
        }
    }

    /// Appends the chunk in non-root format.
    pub fn write_non_root(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.entries.len() as u32).to_be_bytes());
        let mut at = 0u32;
        for e in &self.entries {
            out.extend_from_slice(&at.to_be_bytes());
            at += (NON_ROOT_ENTRY_OVERHEAD + e.key.len()) as u32;
        }
        out.extend_from_slice(&at.to_be_bytes());
        for e in &self.entries {
            out.extend_from_slice(&e.offset.to_be_bytes());
            out.extend_from_slice(&e.on_disk_size.to_be_bytes());
            out.extend_from_slice(&e.key);
        }
    }

    /// HBase's mid-key metadata: the leaf holding data block `(N-1)/2` and its index in it.
    fn mid_key_metadata(&self) -> Option<[u8; MID_KEY_METADATA_SIZE]> {
        let total = *self.sub_entries_at.last()?;
        if total == 0 || self.sub_entries_at.len() != self.entries.len() {
            return None;
        }
        let mid = (total - 1) / 2;
        // First entry whose cumulative count exceeds `mid` (exact match → the next entry).
        let j = match self.sub_entries_at.binary_search(&mid) {
            Ok(i) => i + 1,
            Err(i) => i,
        };
        let e = self.entries.get(j)?;
        let before = if j > 0 { self.sub_entries_at[j - 1] } else { 0 };
        let mut m = [0u8; MID_KEY_METADATA_SIZE];
        m[0..8].copy_from_slice(&e.offset.to_be_bytes());
        m[8..12].copy_from_slice(&e.on_disk_size.to_be_bytes());
        m[12..16].copy_from_slice(&((mid - before) as u32).to_be_bytes());
        Some(m)
    }
}

/// Builds the data block index (HBase's `BlockIndexWriter`), driving leaf blocks through the
/// [`InlineBlockWriter`] protocol.
#[derive(Debug)]
pub struct DataIndexWriter {
    root: IndexChunk,
    /// `None` once the leaf chunk has been promoted to the root at close.
    leaf: Option<IndexChunk>,
    num_levels: u32,
    total_entries: u64,
    pending_first_key: Option<Vec<u8>>,
    total_uncompressed_size: u64,
    max_chunk_size: usize,
    min_entries: usize,
}

/// How to append a block while the index writes its upper levels: takes the block type and
/// payload, returns the block's offset and on-disk size (header and checksums included) and its
/// uncompressed payload size.
pub type EmitBlock<'a> = dyn FnMut(BlockType, &[u8]) -> Result<(u64, u32)> + 'a;

impl DataIndexWriter {
    pub fn new(max_chunk_size: usize, min_entries: usize) -> Result<DataIndexWriter> {
        if max_chunk_size == 0 || min_entries < 2 {
            return Err(FormatError::Invalid(format!(
                "index chunk size must be > 0 and min entries ≥ 2 (got {max_chunk_size}, {min_entries})"
            )));
        }
        Ok(DataIndexWriter {
            root: IndexChunk::default(),
            leaf: Some(IndexChunk::default()),
            num_levels: 1,
            total_entries: 0,
            pending_first_key: None,
            total_uncompressed_size: 0,
            max_chunk_size,
            min_entries,
        })
    }

    /// Adds the entry for a data block just written.
    pub fn add_entry(&mut self, key: Vec<u8>, offset: u64, on_disk_size: u32) -> Result<()> {
        let leaf = self.leaf.as_mut().ok_or_else(|| {
            FormatError::Invalid("index entry added after the index was closed".into())
        })?;
        leaf.add(key, offset, on_disk_size, None);
        self.total_entries += 1;
        Ok(())
    }

    pub fn num_levels(&self) -> u32 {
        self.num_levels
    }

    pub fn num_root_entries(&self) -> usize {
        self.root.len()
    }

    /// Σ uncompressed payload sizes of all index blocks written (trailer field 3).
    pub fn total_uncompressed_size(&self) -> u64 {
        self.total_uncompressed_size
    }

    /// Writes intermediate levels (if the root is too big) and the root block. Returns the
    /// root block's offset (the load-on-open offset). Call after the closing inline round.
    pub fn write_index_blocks(&mut self, emit: &mut EmitBlock<'_>) -> Result<u64> {
        if self.leaf.as_ref().is_some_and(|l| !l.is_empty()) {
            return Err(FormatError::Invalid(
                "leaf index entries left unwritten at close".into(),
            ));
        }
        let mid = if self.num_levels > 1 {
            self.root.mid_key_metadata()
        } else {
            None
        };
        if self.leaf.is_some() {
            while self.root.root_size() > self.max_chunk_size
                && self.root.len() > self.min_entries
                && self.num_levels < MAX_LEVELS
            {
                let level = std::mem::take(&mut self.root);
                self.root = self.write_intermediate_level(&level, emit)?;
                self.num_levels += 1;
            }
        }
        let mut payload = Vec::with_capacity(self.root.root_size() + MID_KEY_METADATA_SIZE);
        self.root.write_root(&mut payload);
        if let Some(m) = mid {
            payload.extend_from_slice(&m);
        }
        let (offset, _) = emit(BlockType::RootIndex, &payload)?;
        self.total_uncompressed_size += payload.len() as u64;
        Ok(offset)
    }

    fn write_intermediate_level(
        &mut self,
        level: &IndexChunk,
        emit: &mut EmitBlock<'_>,
    ) -> Result<IndexChunk> {
        let mut parent = IndexChunk::default();
        let mut cur = IndexChunk::default();
        for (i, e) in level.entries.iter().enumerate() {
            cur.add(e.key.clone(), e.offset, e.on_disk_size, None);
            if i >= self.min_entries && cur.root_size() >= self.max_chunk_size {
                self.write_intermediate_block(&mut parent, &mut cur, emit)?;
            }
        }
        if !cur.is_empty() {
            self.write_intermediate_block(&mut parent, &mut cur, emit)?;
        }
        Ok(parent)
    }

    fn write_intermediate_block(
        &mut self,
        parent: &mut IndexChunk,
        cur: &mut IndexChunk,
        emit: &mut EmitBlock<'_>,
    ) -> Result<()> {
        let mut payload = Vec::with_capacity(cur.non_root_size());
        cur.write_non_root(&mut payload);
        let (offset, size) = emit(BlockType::IntermediateIndex, &payload)?;
        self.total_uncompressed_size += payload.len() as u64;
        let first = cur.entries[0].key.clone();
        parent.add(first, offset, size, None);
        cur.clear();
        Ok(())
    }
}

impl InlineBlockWriter for DataIndexWriter {
    fn should_write_block(&mut self, closing: bool) -> bool {
        let Some(leaf) = self.leaf.as_ref() else {
            return false;
        };
        if leaf.is_empty() {
            return false;
        }
        if closing {
            if self.root.is_empty() {
                // Never wrote a leaf: the leaf chunk becomes a single-level root.
                self.root = self.leaf.take().unwrap_or_default();
                return false;
            }
            return true;
        }
        leaf.non_root_size() >= self.max_chunk_size
    }

    fn block_type(&self) -> BlockType {
        BlockType::LeafIndex
    }

    fn write_inline_block(&mut self, out: &mut Vec<u8>) {
        if let Some(leaf) = self.leaf.as_mut() {
            leaf.write_non_root(out);
            self.pending_first_key = leaf.entries.first().map(|e| e.key.clone());
            leaf.clear();
        }
    }

    fn block_written(
        &mut self,
        offset: u64,
        on_disk_size_with_header: u32,
        uncompressed_size: u32,
    ) {
        self.total_uncompressed_size += uncompressed_size as u64;
        if self.root.is_empty() {
            self.num_levels = 2;
        }
        if let Some(key) = self.pending_first_key.take() {
            self.root.add(
                key,
                offset,
                on_disk_size_with_header,
                Some(self.total_entries),
            );
        }
    }
}

/// HBase's `getMinimumMidpointArray`: the shortest byte string `m` with `left < m <= right`
/// built as HBase builds it, or `None` when the two are equal. REQUIRES `left <= right`.
pub fn minimum_midpoint(left: &[u8], right: &[u8]) -> Option<Vec<u8>> {
    let min = left.len().min(right.len());
    let diff = left
        .iter()
        .zip(right)
        .position(|(a, b)| a != b)
        .unwrap_or(min);
    if diff == min {
        if left.len() < right.len() {
            let mut m = right[..=min].to_vec();
            m[min] = 0;
            return Some(m);
        }
        return None;
    }
    let mut m = left[..=diff].to_vec();
    m[diff] = m[diff].wrapping_add(1);
    Some(m)
}

/// The index key HBase stores for a data block (`HFileWriterImpl.getMidpoint`): a short fake
/// key between the last cell of the previous block (`left`) and the block's first cell
/// (`right`); the first cell's real key for the first block.
pub fn midpoint_key(left: Option<&KeyView<'_>>, right: &KeyView<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    let max = CellType::Maximum.code();
    let Some(left) = left else {
        write_key_parts(
            &mut out,
            right.row,
            right.family,
            right.qualifier,
            right.timestamp,
            right.type_code,
        );
        return out;
    };
    if let Some(m) = minimum_midpoint(left.row, right.row) {
        write_key_parts(&mut out, &m, b"", b"", LATEST_TIMESTAMP, max);
    } else if let Some(m) = minimum_midpoint(left.family, right.family) {
        write_key_parts(&mut out, right.row, &m, b"", LATEST_TIMESTAMP, max);
    } else if let Some(m) = minimum_midpoint(left.qualifier, right.qualifier) {
        write_key_parts(&mut out, right.row, right.family, &m, LATEST_TIMESTAMP, max);
    } else {
        write_key_parts(
            &mut out,
            right.row,
            right.family,
            right.qualifier,
            right.timestamp,
            right.type_code,
        );
    }
    out
}

/// Parses `count` root-format entries; returns them and the bytes consumed.
pub fn parse_root(
    payload: &[u8],
    count: usize,
    offset: u64,
    what: &'static str,
) -> Result<(Vec<IndexEntry>, usize)> {
    let mut c = Cursor::new(payload, offset, what);
    // Each entry takes at least 13 bytes: refuse counts the payload cannot hold.
    if count > payload.len() / 13 + 1 {
        return Err(FormatError::corrupt(
            what,
            offset,
            format!("{count} entries cannot fit in {} bytes", payload.len()),
        ));
    }
    let mut entries = Vec::with_capacity(count);
    for _ in 0..count {
        let off = c.i64()?;
        let size = c.i32()?;
        let klen = c.vint_len()?;
        let key = c.take(klen)?.to_vec();
        if off < 0 || size < 0 {
            return Err(FormatError::corrupt(
                what,
                offset,
                format!("negative block offset {off} or size {size}"),
            ));
        }
        entries.push(IndexEntry {
            offset: off as u64,
            on_disk_size: size as u32,
            key,
        });
    }
    Ok((entries, c.position()))
}

/// Mid-key metadata after a multi-level root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MidKeyMetadata {
    pub leaf_offset: u64,
    pub leaf_on_disk_size: u32,
    pub index_in_leaf: u32,
}

impl MidKeyMetadata {
    pub fn parse(bytes: &[u8], offset: u64) -> Result<MidKeyMetadata> {
        let mut c = Cursor::new(bytes, offset, "mid-key metadata");
        Ok(MidKeyMetadata {
            leaf_offset: c.i64()? as u64,
            leaf_on_disk_size: c.i32()? as u32,
            index_in_leaf: c.i32()? as u32,
        })
    }
}

/// The entry of a non-root index block (`payload`, at file `offset`) whose block may hold `key`:
/// the last one whose key sorts at or before it, or the first when `key` sorts before every
/// one (a child's first key may be a fake one). The same answer as [`find_block`] over
/// [`parse_non_root`]'s entries, found by a binary search over the block's secondary index,
/// as HBase's `BlockIndexReader.binarySearchNonRootIndex` does: a get through a cached leaf
/// index block reads about log2(n) entries and copies one key, instead of parsing every entry
/// (which made the index a sixth, and the allocations half, of a cached get's time). Every
/// entry read is checked as `parse_non_root` checks it; an empty block is an error.
pub fn search_non_root(payload: &[u8], offset: u64, key: &[u8]) -> Result<IndexEntry> {
    let what = "non-root index block";
    let bad = |detail: String| FormatError::corrupt(what, offset, detail);
    let word = |at: usize| -> Result<i32> {
        payload
            .get(at..at + 4)
            .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
            .ok_or_else(|| bad(format!("truncated at byte {at}")))
    };
    let n = word(0)?;
    if n <= 0 || (n as usize).saturating_mul(4 + NON_ROOT_ENTRY_OVERHEAD) > payload.len() {
        return Err(bad(format!("entry count {n} does not fit (or is 0)")));
    }
    let n = n as usize;
    let body_at = 4 + 4 * (n + 1);
    let body = payload
        .get(body_at..)
        .ok_or_else(|| bad("secondary index past the block's end".into()))?;
    // Entry `i`: (block offset, on-disk size, key), checked as parse_non_root checks it.
    let entry = |i: usize| -> Result<(u64, u32, &[u8])> {
        let (s, e) = (word(4 + 4 * i)?, word(4 + 4 * (i + 1))?);
        if s < 0
            || (e as i64) < s as i64 + NON_ROOT_ENTRY_OVERHEAD as i64
            || e as usize > body.len()
        {
            return Err(bad(format!(
                "secondary index entry {i} ({s}..{e}) is invalid"
            )));
        }
        let b = &body[s as usize..e as usize];
        let off = i64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
        let size = i32::from_be_bytes([b[8], b[9], b[10], b[11]]);
        if off < 0 || size < 0 {
            return Err(bad(format!("negative offset {off} or size {size}")));
        }
        Ok((off as u64, size as u32, &b[NON_ROOT_ENTRY_OVERHEAD..]))
    };
    // The first entry whose key sorts after `key` (partition_point by hand: each probe may fail).
    let (mut lo, mut hi) = (0usize, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if compare_flat_keys(entry(mid)?.2, key) == Ordering::Greater {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let (off, size, k) = entry(lo.saturating_sub(1))?;
    Ok(IndexEntry {
        offset: off,
        on_disk_size: size,
        key: k.to_vec(),
    })
}

/// Parses a non-root index block payload, validating its secondary index.
pub fn parse_non_root(payload: &[u8], offset: u64) -> Result<Vec<IndexEntry>> {
    let what = "non-root index block";
    let mut c = Cursor::new(payload, offset, what);
    let n = c.i32()?;
    if n < 0 || (n as usize).saturating_mul(4 + NON_ROOT_ENTRY_OVERHEAD) > payload.len() {
        return Err(FormatError::corrupt(
            what,
            offset,
            format!("entry count {n} does not fit"),
        ));
    }
    let n = n as usize;
    let mut secondary = Vec::with_capacity(n + 1);
    for _ in 0..=n {
        secondary.push(c.i32()?);
    }
    let body = c.rest();
    let body_at = c.offset();
    let mut entries = Vec::with_capacity(n);
    for i in 0..n {
        let (s, e) = (secondary[i], secondary[i + 1]);
        // i64: `s + 12` overflows i32 for a corrupt `s` near i32::MAX.
        if s < 0
            || (e as i64) < s as i64 + NON_ROOT_ENTRY_OVERHEAD as i64
            || e as usize > body.len()
        {
            return Err(FormatError::corrupt(
                what,
                offset,
                format!("secondary index entry {i} ({s}..{e}) is invalid"),
            ));
        }
        let mut ec = Cursor::new(&body[s as usize..e as usize], body_at + s as u64, what);
        let off = ec.i64()?;
        let size = ec.i32()?;
        if off < 0 || size < 0 {
            return Err(FormatError::corrupt(
                what,
                offset,
                format!("negative offset {off} or size {size}"),
            ));
        }
        entries.push(IndexEntry {
            offset: off as u64,
            on_disk_size: size as u32,
            key: ec.rest().to_vec(),
        });
    }
    Ok(entries)
}

/// Index of the last entry whose key is ≤ `key` in HBase order; `None` when `key` sorts before
/// every entry.
pub fn find_block(entries: &[IndexEntry], key: &[u8]) -> Option<usize> {
    let idx = entries.partition_point(|e| compare_flat_keys(&e.key, key) != Ordering::Greater);
    idx.checked_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::first_on_row;

    fn kv(row: &[u8], q: &[u8], ts: i64) -> Vec<u8> {
        let mut k = Vec::new();
        write_key_parts(&mut k, row, b"cf", q, ts, CellType::Put.code());
        k
    }

    #[test]
    fn minimum_midpoint_cases() {
        assert_eq!(
            minimum_midpoint(b"the quick brown fox", b"the who"),
            Some(b"the r".to_vec())
        );
        assert_eq!(minimum_midpoint(b"abc", b"abcde"), Some(b"abc\0".to_vec()));
        assert_eq!(minimum_midpoint(b"abc", b"abc"), None);
        assert_eq!(minimum_midpoint(b"", b"a"), Some(vec![0]));
        assert_eq!(
            minimum_midpoint(b"a\x01", b"a\x05"),
            Some(b"a\x02".to_vec())
        );
    }

    #[test]
    fn midpoint_key_reference_example() {
        let l = kv(b"the quick brown fox", b"q", 1);
        let r = kv(b"the who", b"q", 1);
        let m = midpoint_key(
            Some(&KeyView::parse(&l).unwrap()),
            &KeyView::parse(&r).unwrap(),
        );
        assert_eq!(
            m,
            [
                0, 5, b't', b'h', b'e', b' ', b'r', 0, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                0xff, 0xff
            ]
        );
        // Same row and column: the real key of the right cell.
        let l = kv(b"r", b"q", 9);
        let r = kv(b"r", b"q", 8);
        assert_eq!(
            midpoint_key(
                Some(&KeyView::parse(&l).unwrap()),
                &KeyView::parse(&r).unwrap()
            ),
            r
        );
        // Same row, different qualifier: first-on-row-col of a midpoint qualifier.
        let l = kv(b"r", b"qa", 9);
        let r = kv(b"r", b"qc", 9);
        let m = midpoint_key(
            Some(&KeyView::parse(&l).unwrap()),
            &KeyView::parse(&r).unwrap(),
        );
        let v = KeyView::parse(&m).unwrap();
        assert_eq!(
            (v.row, v.family, v.qualifier, v.type_code),
            (&b"r"[..], &b"cf"[..], &b"qb"[..], 255)
        );
    }

    #[test]
    fn non_root_round_trip_and_secondary_index() {
        let mut chunk = IndexChunk::default();
        for (i, k) in [vec![1u8; 48], vec![2u8; 68], vec![3u8; 38]]
            .into_iter()
            .enumerate()
        {
            chunk.add(k, i as u64 * 100, 50, None);
        }
        let mut p = Vec::new();
        chunk.write_non_root(&mut p);
        assert_eq!(p.len(), chunk.non_root_size());
        // entry sizes 60, 80, 50 → secondary index {0, 60, 140, 190}
        assert_eq!(
            &p[4..20],
            &[0, 0, 0, 0, 0, 0, 0, 60, 0, 0, 0, 140, 0, 0, 0, 190]
        );
        assert_eq!(parse_non_root(&p, 0).unwrap(), chunk.entries);
        let mut r = Vec::new();
        chunk.write_root(&mut r);
        assert_eq!(r.len(), chunk.root_size());
        assert_eq!(parse_root(&r, 3, 0, "root").unwrap().0, chunk.entries);
    }

    #[test]
    fn find_block_uses_last_le() {
        let entries: Vec<IndexEntry> = [b"b", b"d", b"f"]
            .iter()
            .enumerate()
            .map(|(i, r)| IndexEntry {
                offset: i as u64,
                on_disk_size: 1,
                key: first_on_row(*r),
            })
            .collect();
        assert_eq!(find_block(&entries, &kv(b"a", b"", 1)), None);
        assert_eq!(find_block(&entries, &kv(b"b", b"", 1)), Some(0));
        assert_eq!(find_block(&entries, &kv(b"e", b"", 1)), Some(1));
        assert_eq!(find_block(&entries, &kv(b"z", b"", 1)), Some(2));
    }

    proptest::proptest! {
        /// The binary search over the secondary index answers as the full parse and
        /// `find_block` do, for keys before, between, on and after the entries.
        #[test]
        fn search_non_root_is_find_block_over_parse_non_root(
            rows in proptest::collection::btree_set(
                proptest::collection::vec(0u8..4, 1..6), 1..40),
            probes in proptest::collection::vec(
                proptest::collection::vec(0u8..4, 0..7), 1..20),
        ) {
            let mut chunk = IndexChunk::default();
            for (i, r) in rows.iter().enumerate() {
                chunk.add(kv(r, b"q", 5), i as u64 * 100, 50 + i as u32, None);
            }
            let mut p = Vec::new();
            chunk.write_non_root(&mut p);
            let entries = parse_non_root(&p, 7).unwrap();
            for probe in &probes {
                for ts in [1, 5, 9] {
                    let key = kv(probe, b"q", ts);
                    let want = &entries[find_block(&entries, &key).unwrap_or_default()];
                    proptest::prop_assert_eq!(&search_non_root(&p, 7, &key).unwrap(), want);
                }
            }
        }
    }

    #[test]
    fn garbage_index_blocks_are_errors() {
        assert!(search_non_root(&[0, 0, 0, 0], 0, b"k").is_err());
        assert!(search_non_root(&[0, 0, 0, 5, 0, 0], 0, b"k").is_err());
        assert!(search_non_root(&[0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3], 0, b"k").is_err());
        assert!(parse_non_root(&[0, 0, 0, 5, 0, 0], 0).is_err());
        assert!(parse_non_root(&[0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3], 0).is_err());
        // Secondary index entry near i32::MAX (used to overflow `s + 12`).
        let mut p = vec![0, 0, 0, 1];
        p.extend_from_slice(&0x7fff_fffau32.to_be_bytes());
        p.extend_from_slice(&0x7fff_ffffu32.to_be_bytes());
        p.extend_from_slice(&[0; 20]);
        assert!(parse_non_root(&p, 0).is_err());
        assert!(parse_root(&[0; 5], 1, 0, "root").is_err());
        assert!(parse_root(&[0; 5], 1_000_000, 0, "root").is_err());
    }
}
