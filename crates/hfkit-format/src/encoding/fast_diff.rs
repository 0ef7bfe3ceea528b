//! Encoding FAST_DIFF (id 4): DIFF's key delta with a byte-wise timestamp prefix and a flag
//! for a value equal to the previous one. Spec: `formats/encodings.md` §"FAST_DIFF".
//!
//! ```text
//! record: u8 flag
//!           0x07 common timestamp prefix (0..=7)  0x08 SAME_KEY_LENGTH  0x10 SAME_VALUE_LENGTH
//!           0x20 SAME_TYPE                        0x40 SAME_VALUE
//!   first record of a block:
//!         flag 00 | compressedInt keyLength | compressedInt valueLength | compressedInt 0
//!         flat key | value | suffix (delta.rs)
//!   later records:
//!         [compressedInt keyLength]    unless SAME_KEY_LENGTH
//!         [compressedInt valueLength]  unless SAME_VALUE_LENGTH
//!         compressedInt common         common_prefix(cur, prev, withTsType = false)
//!         row and qualifier part       (delta.rs: write_row_and_qualifier)
//!         timestamp[ctp..8]            big-endian bytes after the ctp shared with the previous
//!         [u8 type]                    unless SAME_TYPE
//!         [value]                      unless SAME_VALUE (same length and bytes as previous)
//!         suffix (delta.rs)
//! ```

use std::ops::Range;

use super::delta::{
    common_prefix, family_with_len, prefix_len, read_flagged_lengths, read_row_and_qualifier,
    take_range, write_row_and_qualifier, DeltaFormat, FlaggedLengths, Prev, SameLengthFlags,
};
use super::kind::DataBlockEncoding;
use crate::bytes::{put_compressed_int, Cursor};
use crate::cell::{CellRef, KeyView};
use crate::error::{FormatError, Result};

pub const MASK_TIMESTAMP_PREFIX: u8 = 0x07;
pub const FLAG_SAME_KEY_LENGTH: u8 = 0x08;
pub const FLAG_SAME_VALUE_LENGTH: u8 = 0x10;
/// The two flags above, for [`read_flagged_lengths`].
const SAME_LENGTHS: SameLengthFlags = SameLengthFlags {
    key: FLAG_SAME_KEY_LENGTH,
    value: FLAG_SAME_VALUE_LENGTH,
};
pub const FLAG_SAME_TYPE: u8 = 0x20;
pub const FLAG_SAME_VALUE: u8 = 0x40;
/// The shared timestamp prefix is capped so at least one timestamp byte is always written.
pub const MAX_TIMESTAMP_PREFIX: usize = 7;

/// FAST_DIFF's record format, plugged into [`super::delta::DeltaEncoder`] / `DeltaDecoder`.
#[derive(Debug, Default)]
pub struct FastDiff;

/// FAST_DIFF encoder.
pub type FastDiffEncoder = super::delta::DeltaEncoder<FastDiff>;
/// FAST_DIFF decoder.
pub type FastDiffDecoder = super::delta::DeltaDecoder<FastDiff>;

impl DeltaFormat for FastDiff {
    const ENCODING: DataBlockEncoding = DataBlockEncoding::FastDiff;
    const KEEPS_PREV_VALUE: bool = true;

    fn write_record(cell: &CellRef<'_>, key: &[u8], prev: Option<&Prev<'_>>, out: &mut Vec<u8>) {
        let Some(p) = prev else {
            out.push(0);
            put_compressed_int(out, key.len() as u32);
            put_compressed_int(out, cell.value.len() as u32);
            put_compressed_int(out, 0);
            out.extend_from_slice(key);
            out.extend_from_slice(cell.value);
            return;
        };
        let common = common_prefix(&KeyView::of(cell), &p.view, false);
        let mut flag = 0u8;
        if key.len() == p.key.len() {
            flag |= FLAG_SAME_KEY_LENGTH;
        }
        if cell.value.len() == p.value_len {
            flag |= FLAG_SAME_VALUE_LENGTH;
        }
        if cell.cell_type.code() == p.view.type_code {
            flag |= FLAG_SAME_TYPE;
        }
        let ts = cell.timestamp.to_be_bytes();
        let ts_common = prefix_len(&ts, &p.view.timestamp.to_be_bytes()).min(MAX_TIMESTAMP_PREFIX);
        flag |= ts_common as u8;
        if cell.value.len() == p.value_len && cell.value == p.value {
            flag |= FLAG_SAME_VALUE;
        }
        out.push(flag);
        if flag & FLAG_SAME_KEY_LENGTH == 0 {
            put_compressed_int(out, key.len() as u32);
        }
        if flag & FLAG_SAME_VALUE_LENGTH == 0 {
            put_compressed_int(out, cell.value.len() as u32);
        }
        put_compressed_int(out, common as u32);
        write_row_and_qualifier(cell, common, out);
        out.extend_from_slice(&ts[ts_common..]);
        if flag & FLAG_SAME_TYPE == 0 {
            out.push(cell.cell_type.code());
        }
        if flag & FLAG_SAME_VALUE == 0 {
            out.extend_from_slice(cell.value);
        }
    }

    fn reset(&mut self) {}

    fn read_record(
        &mut self,
        c: &mut Cursor<'_>,
        at: usize,
        prev_key: &[u8],
        prev_value: Range<usize>,
        key: &mut Vec<u8>,
    ) -> Result<Range<usize>> {
        let FlaggedLengths {
            flag,
            key_len,
            value_len,
            common,
            common_at,
        } = read_flagged_lengths(c, SAME_LENGTHS, prev_key, &prev_value)?;
        if prev_key.is_empty() {
            if common != 0 {
                return Err(FormatError::corrupt(
                    "cell record",
                    common_at,
                    format!("first cell of a block has common prefix {common}"),
                ));
            }
            key.extend_from_slice(c.take(key_len)?);
            return take_range(c, at, value_len);
        }
        read_row_and_qualifier(c, prev_key, family_with_len(prev_key), key_len, common, key)?;
        let ts_common = (flag & MASK_TIMESTAMP_PREFIX) as usize;
        let n = prev_key.len();
        let prev_ts = prev_key
            .get(n.saturating_sub(9)..n.saturating_sub(1))
            .unwrap_or_default();
        key.extend_from_slice(prev_ts.get(..ts_common).unwrap_or_default());
        key.extend_from_slice(c.take(8 - ts_common)?);
        let cell_type = if flag & FLAG_SAME_TYPE != 0 {
            prev_key.last().copied().unwrap_or_default()
        } else {
            c.u8()?
        };
        key.push(cell_type);
        if flag & FLAG_SAME_VALUE != 0 {
            if value_len != prev_value.len() {
                return Err(FormatError::corrupt(
                    "cell record",
                    c.offset(),
                    format!(
                        "SAME_VALUE with value length {value_len}, previous value has {}",
                        prev_value.len()
                    ),
                ));
            }
            return Ok(prev_value);
        }
        take_range(c, at, value_len)
    }
}
