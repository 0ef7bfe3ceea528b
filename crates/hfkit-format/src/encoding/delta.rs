//! Machinery shared by the three key-delta encodings (PREFIX, DIFF, FAST_DIFF): payload
//! framing, the record suffix, HBase's common-prefix function, and the flagged lengths and
//! row/qualifier part of DIFF and FAST_DIFF records. Spec: `formats/encodings.md`
//! §"Key-delta framing", §"Common prefix" and §"Row and qualifier part".
//!
//! ```text
//! payload: i16 encodingId | i32 unencodedSize | record*
//! record:  <key/value part: prefix.rs, diff.rs, fast_diff.rs> | suffix
//! suffix:  [compressedInt tagsLength | tags (raw, or tags.rs-compressed)]  iff include_tags
//!          [VLong seqId]                                                  iff include_mvcc
//! unencodedSize = Σ NONE-format cell sizes (EncodingContext::unencoded_size)
//! ```
//!
//! An encoding plugs in through [`DeltaFormat`]: how one record's key and value are written
//! given the previous cell, and how they are read back given the previous key. The generic
//! [`DeltaEncoder`] and [`DeltaDecoder`] do the rest. The decoder keeps the current and the
//! previous flat key in two reusable buffers; values (and uncompressed tags) are ranges into
//! the payload, so decoding a cell allocates nothing once the buffers have grown.

use std::marker::PhantomData;
use std::ops::Range;

use super::codec::{CellDecoder, CellEncoder, EncodingContext, KeyLayout, Payload};
use super::kind::DataBlockEncoding;
use super::tags::{compress_tags, decompress_tags, TagDictionary};
use crate::bytes::{put_compressed_int, put_vlong, vlong_size, Cursor};
use crate::cell::{check_tags, CellRef, KeyView};
use crate::error::{FormatError, Result};

/// Bytes before the first record: the i16 encoding id and the i32 unencoded size.
pub const PAYLOAD_PREFIX_LEN: usize = 2 + 4;
/// Bytes of the row length at the start of a flat key.
pub const ROW_LENGTH_SIZE: usize = 2;
/// Bytes of the family length.
pub const FAMILY_LENGTH_SIZE: usize = 1;
/// Bytes of timestamp + type at the end of a flat key.
pub const TIMESTAMP_TYPE_SIZE: usize = 8 + 1;
/// Longest tags area a cell can have (its NONE-format length is a u16).
const MAX_TAGS_LEN: usize = u16::MAX as usize;

/// Length of the common prefix of two byte strings.
pub fn prefix_len(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// HBase's `findCommonPrefixInFlatKey(cur, prev, bypassFamilyCheck = true, withTsType)`: how
/// many leading bytes of `cur`'s flat key the encoder may take from `prev`'s.
///
/// Not always the true byte-wise common prefix: the family is assumed equal (one family per
/// file) and counted whole once the rows match; the timestamp (and type) only count when the
/// qualifiers are equal and `with_ts_type`. A byte-exact writer must use exactly this.
pub fn common_prefix(cur: &KeyView<'_>, prev: &KeyView<'_>, with_ts_type: bool) -> usize {
    let (r1, r2) = (cur.row.len() as u16, prev.row.len() as u16);
    if r1 != r2 {
        return prefix_len(&r1.to_be_bytes(), &r2.to_be_bytes());
    }
    let row_common = prefix_len(cur.row, prev.row);
    let mut common = ROW_LENGTH_SIZE + row_common;
    if row_common != cur.row.len() {
        return common;
    }
    common += FAMILY_LENGTH_SIZE + cur.family.len();
    let q_common = prefix_len(cur.qualifier, prev.qualifier);
    common += q_common;
    if !with_ts_type || cur.qualifier.len().max(prev.qualifier.len()) != q_common {
        return common;
    }
    let ts_common = prefix_len(&cur.timestamp.to_be_bytes(), &prev.timestamp.to_be_bytes());
    common += ts_common;
    if ts_common != 8 {
        return common;
    }
    if cur.type_code == prev.type_code {
        common += 1;
    }
    common
}

/// The row/qualifier part of a DIFF or FAST_DIFF record (HBase's `writeRowKeyExcludingCommon`
/// plus qualifier): when `common` ends inside the row length or row, the unshared row bytes
/// then the whole qualifier; otherwise only the qualifier bytes after the shared ones.
pub fn write_row_and_qualifier(cell: &CellRef<'_>, common: usize, out: &mut Vec<u8>) {
    let row_len = cell.row.len();
    if common < row_len + ROW_LENGTH_SIZE {
        let row_len_bytes = (row_len as u16).to_be_bytes();
        if common < ROW_LENGTH_SIZE {
            out.extend_from_slice(&row_len_bytes[common..]);
            out.extend_from_slice(cell.row);
        } else {
            out.extend_from_slice(&cell.row[common - ROW_LENGTH_SIZE..]);
        }
        out.extend_from_slice(cell.qualifier);
    } else {
        let shared_qual = common
            .saturating_sub(row_len + ROW_LENGTH_SIZE + cell.family.len() + FAMILY_LENGTH_SIZE);
        out.extend_from_slice(cell.qualifier.get(shared_qual..).unwrap_or_default());
    }
}

/// Reads the row/qualifier part of a DIFF or FAST_DIFF record, appending the key up to (not
/// including) its timestamp to `key`. `prev_key` is the previous flat key (empty for the first
/// cell), `family` the family with its length byte, `key_len` the stated key length.
///
/// Mirrors HBase's decoders: the branch is chosen with the *previous* row's length.
pub fn read_row_and_qualifier(
    c: &mut Cursor<'_>,
    prev_key: &[u8],
    family: &[u8],
    key_len: usize,
    common: usize,
    key: &mut Vec<u8>,
) -> Result<()> {
    let at = c.offset();
    let body_len = key_len.checked_sub(TIMESTAMP_TYPE_SIZE).ok_or_else(|| {
        FormatError::corrupt(
            "cell record",
            at,
            format!("key length {key_len} is too short"),
        )
    })?;
    let prev_body = prev_key
        .get(..prev_key.len().saturating_sub(TIMESTAMP_TYPE_SIZE))
        .unwrap_or_default();
    let shared = prev_body.get(..common).ok_or_else(|| {
        FormatError::corrupt(
            "cell record",
            at,
            format!("common prefix {common} is longer than the previous key's {} row/family/qualifier bytes", prev_body.len()),
        )
    })?;
    if common > body_len {
        return Err(FormatError::corrupt(
            "cell record",
            at,
            format!("common prefix {common} is longer than the key ({key_len} bytes)"),
        ));
    }
    key.extend_from_slice(shared);
    let prev_row_len = match prev_key {
        [a, b, ..] => u16::from_be_bytes([*a, *b]) as usize,
        _ => 0,
    };
    if prev_key.is_empty() || common < prev_row_len + ROW_LENGTH_SIZE {
        let row_rest = if common < ROW_LENGTH_SIZE {
            key.extend_from_slice(c.take(ROW_LENGTH_SIZE - common)?);
            row_len_of(key)
        } else {
            row_len_of(key) + ROW_LENGTH_SIZE - common
        };
        let row_len = row_len_of(key);
        key.extend_from_slice(c.take(row_rest)?);
        key.extend_from_slice(family);
        let qual_len = body_len
            .checked_sub(ROW_LENGTH_SIZE + row_len + family.len())
            .ok_or_else(|| {
                FormatError::corrupt(
                    "cell record",
                    at,
                    format!(
                        "key length {key_len} is shorter than its row ({row_len} bytes) and family"
                    ),
                )
            })?;
        key.extend_from_slice(c.take(qual_len)?);
    } else {
        key.extend_from_slice(c.take(body_len - common)?);
    }
    Ok(())
}

/// The row length of a key whose first two bytes are present (0 otherwise).
fn row_len_of(key: &[u8]) -> usize {
    match key {
        [a, b, ..] => u16::from_be_bytes([*a, *b]) as usize,
        _ => 0,
    }
}

/// The family of a validated flat key, with its length byte.
pub fn family_with_len(key: &[u8]) -> &[u8] {
    let at = ROW_LENGTH_SIZE + row_len_of(key);
    let len = key.get(at).copied().unwrap_or(0) as usize;
    key.get(at..at + FAMILY_LENGTH_SIZE + len)
        .unwrap_or_default()
}

/// Reads `n` bytes and returns their range in the payload (`at` = payload offset of the
/// cursor's first byte).
pub fn take_range(c: &mut Cursor<'_>, at: usize, n: usize) -> Result<Range<usize>> {
    let start = at + c.position();
    c.skip(n)?;
    Ok(start..start + n)
}

/// The lengths that start a DIFF or FAST_DIFF record, after its flag byte (PREFIX's three
/// plain varints have no flag and count the unshared key bytes, so it reads its own).
pub struct FlaggedLengths {
    pub flag: u8,
    pub key_len: usize,
    pub value_len: usize,
    pub common: usize,
    /// File offset of the `common` varint ([`Cursor::offset`]), for errors about it.
    pub common_at: u64,
}

/// An encoding's flag bits for a key length and a value length repeated from the previous
/// cell (their varints are then absent).
#[derive(Clone, Copy, Debug)]
pub struct SameLengthFlags {
    pub key: u8,
    pub value: u8,
}

/// Reads `u8 flag | [compressedInt keyLength] | [compressedInt valueLength] | compressedInt
/// common`; a length whose `same` flag is set is the previous cell's (`prev_key`'s length,
/// `prev_value`'s length). `formats/encodings.md` §"DIFF" and §"FAST_DIFF".
#[inline]
pub fn read_flagged_lengths(
    c: &mut Cursor<'_>,
    same: SameLengthFlags,
    prev_key: &[u8],
    prev_value: &Range<usize>,
) -> Result<FlaggedLengths> {
    let flag = c.u8()?;
    let key_len = if flag & same.key != 0 {
        prev_key.len()
    } else {
        c.compressed_int()? as usize
    };
    let value_len = if flag & same.value != 0 {
        prev_value.len()
    } else {
        c.compressed_int()? as usize
    };
    let common_at = c.offset();
    let common = c.compressed_int()? as usize;
    Ok(FlaggedLengths {
        flag,
        key_len,
        value_len,
        common,
        common_at,
    })
}

/// The previous cell, as an encoder sees it.
pub struct Prev<'a> {
    pub key: &'a [u8],
    pub view: KeyView<'a>,
    /// The previous value; only kept when [`DeltaFormat::KEEPS_PREV_VALUE`], else empty.
    pub value: &'a [u8],
    pub value_len: usize,
}

/// One key-delta encoding's record format (without the shared suffix).
pub trait DeltaFormat: Default + Send + 'static {
    const ENCODING: DataBlockEncoding;
    /// Whether the encoder needs the previous value's bytes (FAST_DIFF's SAME_VALUE).
    const KEEPS_PREV_VALUE: bool = false;

    /// Appends the key/value part of `cell`'s record; `key` is its flat key, `prev` the
    /// previous cell of the block (`None` for the first).
    fn write_record(cell: &CellRef<'_>, key: &[u8], prev: Option<&Prev<'_>>, out: &mut Vec<u8>);

    /// Forgets per-block decoding state.
    fn reset(&mut self);

    /// Reads one record's key/value part. `c` starts at payload offset `at`; `prev_key` is the
    /// previous flat key (empty for the first cell of the block) and `prev_value` its value's
    /// payload range. Appends the new flat key to the empty `key`; returns the value's range.
    fn read_record(
        &mut self,
        c: &mut Cursor<'_>,
        at: usize,
        prev_key: &[u8],
        prev_value: Range<usize>,
        key: &mut Vec<u8>,
    ) -> Result<Range<usize>>;
}

/// Writes one key-delta encoded block.
pub struct DeltaEncoder<F: DeltaFormat> {
    ctx: EncodingContext,
    dict: Option<TagDictionary>,
    size_at: Option<usize>,
    unencoded: usize,
    encoded: usize,
    key: Vec<u8>,
    prev_key: Vec<u8>,
    prev_layout: KeyLayout,
    prev_value: Vec<u8>,
    prev_value_len: usize,
    has_prev: bool,
    _format: PhantomData<F>,
}

impl<F: DeltaFormat> DeltaEncoder<F> {
    pub fn new(ctx: EncodingContext) -> DeltaEncoder<F> {
        DeltaEncoder {
            ctx,
            dict: (ctx.include_tags && ctx.compress_tags).then(TagDictionary::new),
            size_at: None,
            unencoded: 0,
            encoded: 0,
            key: Vec::new(),
            prev_key: Vec::new(),
            prev_layout: KeyLayout::default(),
            prev_value: Vec::new(),
            prev_value_len: 0,
            has_prev: false,
            _format: PhantomData,
        }
    }
}

/// The layout of the flat key `cell.write_key` produces.
fn layout_of(cell: &CellRef<'_>) -> KeyLayout {
    let row = ROW_LENGTH_SIZE..ROW_LENGTH_SIZE + cell.row.len();
    let family = row.end + FAMILY_LENGTH_SIZE..row.end + FAMILY_LENGTH_SIZE + cell.family.len();
    let qualifier = family.end..family.end + cell.qualifier.len();
    KeyLayout {
        row,
        family,
        qualifier,
        timestamp: cell.timestamp,
        cell_type: cell.cell_type,
    }
}

/// Appends the record suffix: tags (raw or compressed) and the sequence id, as the context says.
pub fn write_suffix(
    ctx: &EncodingContext,
    dict: Option<&mut TagDictionary>,
    cell: &CellRef<'_>,
    out: &mut Vec<u8>,
) -> Result<()> {
    if ctx.include_tags {
        put_compressed_int(out, cell.tags.len() as u32);
        if !cell.tags.is_empty() {
            match dict {
                Some(d) => compress_tags(cell.tags, d, out)?,
                None => out.extend_from_slice(cell.tags),
            }
        }
    }
    if ctx.include_mvcc {
        put_vlong(out, cell.seq_id as i64);
    }
    Ok(())
}

impl<F: DeltaFormat> CellEncoder for DeltaEncoder<F> {
    fn start_block(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(&F::ENCODING.id().to_be_bytes());
        self.size_at = Some(out.len());
        out.extend_from_slice(&0u32.to_be_bytes());
        self.unencoded = 0;
        self.encoded = 0;
        self.has_prev = false;
        if let Some(d) = self.dict.as_mut() {
            d.clear();
        }
    }

    fn encode(&mut self, cell: &CellRef<'_>, out: &mut Vec<u8>) -> Result<()> {
        cell.validate()?;
        let prev_family = self
            .prev_key
            .get(self.prev_layout.family.clone())
            .unwrap_or_default();
        if self.has_prev && cell.family != prev_family {
            return Err(FormatError::Invalid(format!(
                "{} blocks hold one column family; got family {:?} after {:?}",
                F::ENCODING.name(),
                String::from_utf8_lossy(cell.family),
                String::from_utf8_lossy(prev_family),
            )));
        }
        self.key.clear();
        cell.write_key(&mut self.key);
        let before = out.len();
        {
            let prev = self.has_prev.then(|| Prev {
                key: &self.prev_key,
                view: self.prev_layout.view(&self.prev_key),
                value: &self.prev_value,
                value_len: self.prev_value_len,
            });
            F::write_record(cell, &self.key, prev.as_ref(), out);
        }
        write_suffix(&self.ctx, self.dict.as_mut(), cell, out)?;
        self.encoded += out.len() - before;
        self.unencoded += self.ctx.unencoded_size(cell);
        std::mem::swap(&mut self.key, &mut self.prev_key);
        self.prev_layout = layout_of(cell);
        self.prev_value_len = cell.value.len();
        if F::KEEPS_PREV_VALUE {
            self.prev_value.clear();
            self.prev_value.extend_from_slice(cell.value);
        }
        self.has_prev = true;
        Ok(())
    }

    fn finish_block(&mut self, out: &mut Vec<u8>) {
        if let Some(at) = self.size_at.take() {
            if let Some(slot) = out.get_mut(at..at + 4) {
                slot.copy_from_slice(&(self.unencoded as u32).to_be_bytes());
            }
        }
    }

    fn encoded_bytes(&self) -> usize {
        self.encoded
    }

    fn unencoded_bytes(&self) -> usize {
        self.unencoded
    }
}

/// Reads one key-delta encoded block payload.
pub struct DeltaDecoder<F: DeltaFormat> {
    payload: Payload,
    ctx: EncodingContext,
    block_offset: u64,
    format: F,
    dict: Option<TagDictionary>,
    /// The i32 stored after the encoding id.
    declared_unencoded: u64,
    /// Σ NONE sizes of the cells decoded so far in this pass.
    unencoded: u64,
    next: usize,
    has_current: bool,
    broken: bool,
    key: Vec<u8>,
    prev_key: Vec<u8>,
    layout: KeyLayout,
    value: Range<usize>,
    tags: Range<usize>,
    tags_in_buf: bool,
    tags_buf: Vec<u8>,
    seq_id: u64,
}

impl<F: DeltaFormat> DeltaDecoder<F> {
    /// A decoder over a whole ENCODED_DATA payload (starting with the encoding id).
    pub fn new(
        payload: impl Into<Payload>,
        ctx: EncodingContext,
        block_offset: u64,
    ) -> Result<DeltaDecoder<F>> {
        let payload = payload.into();
        let name = F::ENCODING.name();
        let head = payload.get(..PAYLOAD_PREFIX_LEN).ok_or_else(|| {
            FormatError::corrupt(
                "encoded data block",
                block_offset,
                format!(
                    "{name} payload of {} bytes is shorter than its 6-byte prefix",
                    payload.len()
                ),
            )
        })?;
        let id = u16::from_be_bytes([head[0], head[1]]);
        if id != F::ENCODING.id() {
            return Err(FormatError::corrupt(
                "encoded data block",
                block_offset,
                format!(
                    "encoding id {id} where {name} ({}) was expected",
                    F::ENCODING.id()
                ),
            ));
        }
        let declared = i32::from_be_bytes([head[2], head[3], head[4], head[5]]);
        let declared_unencoded = u64::try_from(declared).map_err(|_| {
            FormatError::corrupt(
                "encoded data block",
                block_offset,
                format!("{name} unencoded size {declared} is negative"),
            )
        })?;
        Ok(DeltaDecoder {
            payload,
            ctx,
            block_offset,
            format: F::default(),
            dict: (ctx.include_tags && ctx.compress_tags).then(TagDictionary::new),
            declared_unencoded,
            unencoded: 0,
            next: PAYLOAD_PREFIX_LEN,
            has_current: false,
            broken: false,
            key: Vec::new(),
            prev_key: Vec::new(),
            layout: KeyLayout::default(),
            value: 0..0,
            tags: 0..0,
            tags_in_buf: false,
            tags_buf: Vec::new(),
            seq_id: 0,
        })
    }

    fn corrupt(&self, at: usize, e: FormatError) -> FormatError {
        FormatError::corrupt(
            "encoded data block",
            self.block_offset,
            format!("{} cell at payload byte {at}: {e}", F::ENCODING.name()),
        )
    }

    /// Decodes the record at `self.next`.
    fn read_one(&mut self, at: usize) -> Result<usize> {
        let region = self.payload.get(at..).unwrap_or_default();
        let mut c = Cursor::new(region, at as u64, "cell record");
        std::mem::swap(&mut self.key, &mut self.prev_key);
        self.key.clear();
        let prev_key: &[u8] = if self.has_current {
            &self.prev_key
        } else {
            &[]
        };
        let prev_value = if self.has_current {
            self.value.clone()
        } else {
            0..0
        };
        let value = self
            .format
            .read_record(&mut c, at, prev_key, prev_value, &mut self.key)?;
        let layout = KeyLayout::parse(&self.key, c.offset())?;
        let mut tags = 0..0;
        let mut tags_in_buf = false;
        if self.ctx.include_tags {
            let len_at = c.offset();
            let tags_len = c.compressed_int()? as usize;
            if tags_len > MAX_TAGS_LEN {
                return Err(FormatError::corrupt(
                    "cell record",
                    len_at,
                    format!("tags length {tags_len} exceeds 65535"),
                ));
            }
            if tags_len > 0 {
                match self.dict.as_mut() {
                    Some(d) => {
                        decompress_tags(&mut c, tags_len, d, &mut self.tags_buf)?;
                        tags = 0..tags_len;
                        tags_in_buf = true;
                    }
                    None => {
                        tags = take_range(&mut c, at, tags_len)?;
                        let bytes = self.payload.get(tags.clone()).unwrap_or_default();
                        check_tags(bytes).map_err(|e| {
                            FormatError::corrupt("cell tags", len_at, e.to_string())
                        })?;
                    }
                }
            }
        }
        let seq_id = if self.ctx.include_mvcc {
            c.vlong()? as u64
        } else {
            0
        };
        let consumed = c.position();
        self.unencoded += 8 + self.key.len() as u64 + value.len() as u64;
        if self.ctx.include_tags {
            self.unencoded += 2 + tags.len() as u64;
        }
        if self.ctx.include_mvcc {
            self.unencoded += vlong_size(seq_id as i64) as u64;
        }
        self.layout = layout;
        self.value = value;
        self.tags = tags;
        self.tags_in_buf = tags_in_buf;
        self.seq_id = seq_id;
        self.has_current = true;
        Ok(at + consumed)
    }
}

impl<F: DeltaFormat> CellDecoder for DeltaDecoder<F> {
    fn advance(&mut self) -> Result<bool> {
        if self.broken {
            return Err(FormatError::corrupt(
                "encoded data block",
                self.block_offset,
                format!("{} block: advance after a corrupt cell", F::ENCODING.name()),
            ));
        }
        if self.next >= self.payload.len() {
            if self.unencoded != self.declared_unencoded {
                self.broken = true;
                return Err(FormatError::corrupt(
                    "encoded data block",
                    self.block_offset,
                    format!(
                        "{} block states {} unencoded bytes but its cells take {}",
                        F::ENCODING.name(),
                        self.declared_unencoded,
                        self.unencoded
                    ),
                ));
            }
            return Ok(false);
        }
        let at = self.next;
        match self.read_one(at) {
            Ok(next) => {
                self.next = next;
                Ok(true)
            }
            Err(e) => {
                self.broken = true;
                Err(self.corrupt(at, e))
            }
        }
    }

    fn key(&self) -> &[u8] {
        &self.key
    }

    fn layout(&self) -> &KeyLayout {
        &self.layout
    }

    fn value(&self) -> &[u8] {
        self.payload.get(self.value.clone()).unwrap_or_default()
    }

    fn tags(&self) -> &[u8] {
        let source = if self.tags_in_buf {
            &self.tags_buf[..]
        } else {
            &self.payload[..]
        };
        source.get(self.tags.clone()).unwrap_or_default()
    }

    fn seq_id(&self) -> u64 {
        self.seq_id
    }

    fn rewind(&mut self) {
        self.next = PAYLOAD_PREFIX_LEN;
        self.has_current = false;
        self.broken = false;
        self.unencoded = 0;
        self.key.clear();
        self.layout = KeyLayout::default();
        self.value = 0..0;
        self.tags = 0..0;
        self.tags_in_buf = false;
        self.format.reset();
        if let Some(d) = self.dict.as_mut() {
            d.clear();
        }
    }

    fn into_payload(self: Box<Self>) -> Vec<u8> {
        self.payload.into_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::{CellType, KeyView};

    fn kv<'a>(row: &'a [u8], q: &'a [u8], ts: i64, t: CellType) -> KeyView<'a> {
        KeyView {
            row,
            family: b"cf",
            qualifier: q,
            timestamp: ts,
            type_code: t.code(),
        }
    }

    #[test]
    fn common_prefix_follows_hbase_rules() {
        let put = CellType::Put;
        // row lengths differ: only the common part of the two length bytes
        assert_eq!(
            common_prefix(&kv(b"ab", b"q", 1, put), &kv(b"abc", b"q", 1, put), true),
            1
        );
        assert_eq!(
            common_prefix(&kv(&[0; 300], b"q", 1, put), &kv(b"a", b"q", 1, put), true),
            0
        );
        // rows differ after 1 byte
        assert_eq!(
            common_prefix(&kv(b"ab", b"q", 1, put), &kv(b"ax", b"q", 1, put), true),
            3
        );
        // same row: + family with its length byte + common qualifier bytes
        assert_eq!(
            common_prefix(&kv(b"ab", b"qa", 1, put), &kv(b"ab", b"qb", 1, put), true),
            2 + 2 + 3 + 1
        );
        // qualifier is a strict prefix: no timestamp counted
        assert_eq!(
            common_prefix(&kv(b"ab", b"q", 1, put), &kv(b"ab", b"qq", 1, put), true),
            2 + 2 + 3 + 1
        );
        // same qualifier: timestamp bytes, then type if the whole timestamp matches
        assert_eq!(
            common_prefix(
                &kv(b"ab", b"q", 0x0102, put),
                &kv(b"ab", b"q", 0x0103, put),
                true
            ),
            8 + 7
        );
        assert_eq!(
            common_prefix(&kv(b"ab", b"q", 5, put), &kv(b"ab", b"q", 5, put), true),
            8 + 8 + 1
        );
        assert_eq!(
            common_prefix(
                &kv(b"ab", b"q", 5, put),
                &kv(b"ab", b"q", 5, CellType::Delete),
                true
            ),
            8 + 8
        );
        // without ts/type
        assert_eq!(
            common_prefix(&kv(b"ab", b"q", 5, put), &kv(b"ab", b"q", 5, put), false),
            8
        );
    }
}
