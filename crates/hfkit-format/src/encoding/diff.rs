//! Encoding DIFF (id 3): keys as deltas against the previous key, with flags for repeated
//! lengths and type and a variable-length (possibly differential) timestamp.
//! Spec: `formats/encodings.md` §"DIFF".
//!
//! ```text
//! first record only:  u8 familyLength | family           (before the flag; never repeated)
//! record: u8 flag
//!           0x01 SAME_KEY_LENGTH  0x02 SAME_VALUE_LENGTH  0x04 SAME_TYPE  0x08 TIMESTAMP_IS_DIFF
//!           0x70 (timestamp byte count - 1)               0x80 TIMESTAMP_SIGN
//!         [compressedInt keyLength]    unless SAME_KEY_LENGTH
//!         [compressedInt valueLength]  unless SAME_VALUE_LENGTH
//!         compressedInt common         common_prefix(cur, prev, withTsType = false); 0 first
//!         row and qualifier part       (delta.rs: write_row_and_qualifier)
//!         timestamp or difference      byte count from the flag, LITTLE-endian, magnitude only
//!         [u8 type]                    unless SAME_TYPE
//!         value | suffix (delta.rs)
//! ```
//! Timestamp: the first cell stores |ts| (SIGN if negative). Later cells store
//! d = |prevTs - ts| with IS_DIFF (SIGN if prevTs - ts < 0) when d needs fewer bytes than
//! |ts|, else |ts|. Reading: v = stored; if SIGN v = -v; if IS_DIFF ts = prevTs - v.

use std::ops::Range;

use super::delta::{
    common_prefix, read_flagged_lengths, read_row_and_qualifier, take_range,
    write_row_and_qualifier, DeltaFormat, FlaggedLengths, Prev, SameLengthFlags,
};
use super::kind::DataBlockEncoding;
use crate::bytes::{put_compressed_int, Cursor};
use crate::cell::{CellRef, KeyView};
use crate::error::{FormatError, Result};

pub const FLAG_SAME_KEY_LENGTH: u8 = 0x01;
pub const FLAG_SAME_VALUE_LENGTH: u8 = 0x02;
/// The two flags above, for [`read_flagged_lengths`].
const SAME_LENGTHS: SameLengthFlags = SameLengthFlags {
    key: FLAG_SAME_KEY_LENGTH,
    value: FLAG_SAME_VALUE_LENGTH,
};
pub const FLAG_SAME_TYPE: u8 = 0x04;
pub const FLAG_TIMESTAMP_IS_DIFF: u8 = 0x08;
pub const MASK_TIMESTAMP_LENGTH: u8 = 0x70;
pub const SHIFT_TIMESTAMP_LENGTH: u32 = 4;
pub const FLAG_TIMESTAMP_SIGN: u8 = 0x80;

/// HBase's `ByteBufferUtils.longFitsIn`: bytes needed for a non-negative value (8 if negative).
pub fn long_fits_in(v: i64) -> usize {
    if v < 0 {
        8
    } else {
        let bits = 64 - v.leading_zeros() as usize;
        bits.div_ceil(8).max(1)
    }
}

/// DIFF's record format, plugged into [`super::delta::DeltaEncoder`] / `DeltaDecoder`.
#[derive(Debug, Default)]
pub struct Diff {
    /// The block's family with its length byte, from the first record.
    family: Vec<u8>,
}

/// DIFF encoder.
pub type DiffEncoder = super::delta::DeltaEncoder<Diff>;
/// DIFF decoder.
pub type DiffDecoder = super::delta::DeltaDecoder<Diff>;

impl DeltaFormat for Diff {
    const ENCODING: DataBlockEncoding = DataBlockEncoding::Diff;

    fn write_record(cell: &CellRef<'_>, key: &[u8], prev: Option<&Prev<'_>>, out: &mut Vec<u8>) {
        let mut flag = 0u8;
        let (stored, byte_count, common) = match prev {
            None => {
                let mut ts = cell.timestamp;
                if ts < 0 {
                    flag |= FLAG_TIMESTAMP_SIGN;
                    ts = ts.wrapping_neg();
                }
                out.push(cell.family.len() as u8);
                out.extend_from_slice(cell.family);
                (ts, long_fits_in(ts), 0)
            }
            Some(p) => {
                let common = common_prefix(&KeyView::of(cell), &p.view, false);
                if key.len() == p.key.len() {
                    flag |= FLAG_SAME_KEY_LENGTH;
                }
                if cell.value.len() == p.value_len {
                    flag |= FLAG_SAME_VALUE_LENGTH;
                }
                if cell.cell_type.code() == p.view.type_code {
                    flag |= FLAG_SAME_TYPE;
                }
                let mut ts = cell.timestamp;
                let mut diff = p.view.timestamp.wrapping_sub(ts);
                let negative_ts = ts < 0;
                if negative_ts {
                    ts = ts.wrapping_neg();
                }
                let negative_diff = diff < 0;
                if negative_diff {
                    diff = diff.wrapping_neg();
                }
                let (ts_bytes, diff_bytes) = (long_fits_in(ts), long_fits_in(diff));
                if diff_bytes < ts_bytes {
                    flag |= FLAG_TIMESTAMP_IS_DIFF;
                    if negative_diff {
                        flag |= FLAG_TIMESTAMP_SIGN;
                    }
                    (diff, diff_bytes, common)
                } else {
                    if negative_ts {
                        flag |= FLAG_TIMESTAMP_SIGN;
                    }
                    (ts, ts_bytes, common)
                }
            }
        };
        flag |= ((byte_count - 1) as u8) << SHIFT_TIMESTAMP_LENGTH;
        out.push(flag);
        if flag & FLAG_SAME_KEY_LENGTH == 0 {
            put_compressed_int(out, key.len() as u32);
        }
        if flag & FLAG_SAME_VALUE_LENGTH == 0 {
            put_compressed_int(out, cell.value.len() as u32);
        }
        put_compressed_int(out, common as u32);
        write_row_and_qualifier(cell, common, out);
        out.extend_from_slice(&stored.to_le_bytes()[..byte_count]);
        if flag & FLAG_SAME_TYPE == 0 {
            out.push(cell.cell_type.code());
        }
        out.extend_from_slice(cell.value);
    }

    fn reset(&mut self) {
        self.family.clear();
    }

    fn read_record(
        &mut self,
        c: &mut Cursor<'_>,
        at: usize,
        prev_key: &[u8],
        prev_value: Range<usize>,
        key: &mut Vec<u8>,
    ) -> Result<Range<usize>> {
        if prev_key.is_empty() {
            let len = c.u8()?;
            self.family.clear();
            self.family.push(len);
            self.family.extend_from_slice(c.take(len as usize)?);
        }
        let FlaggedLengths {
            flag,
            key_len,
            value_len,
            common,
            ..
        } = read_flagged_lengths(c, SAME_LENGTHS, prev_key, &prev_value)?;
        read_row_and_qualifier(c, prev_key, &self.family, key_len, common, key)?;
        let byte_count = ((flag & MASK_TIMESTAMP_LENGTH) >> SHIFT_TIMESTAMP_LENGTH) as usize + 1;
        let mut le = [0u8; 8];
        le[..byte_count].copy_from_slice(c.take(byte_count)?);
        let mut ts = i64::from_le_bytes(le);
        if flag & FLAG_TIMESTAMP_SIGN != 0 {
            ts = ts.wrapping_neg();
        }
        if flag & FLAG_TIMESTAMP_IS_DIFF != 0 {
            ts = prev_timestamp(prev_key).wrapping_sub(ts);
        }
        key.extend_from_slice(&ts.to_be_bytes());
        let cell_type = if flag & FLAG_SAME_TYPE != 0 {
            *prev_key.last().ok_or_else(|| {
                FormatError::corrupt(
                    "cell record",
                    c.offset(),
                    "SAME_TYPE flag on the first cell of a block",
                )
            })?
        } else {
            c.u8()?
        };
        key.push(cell_type);
        take_range(c, at, value_len)
    }
}

/// The timestamp of a validated flat key (0 for an empty key, as HBase's initial state).
pub fn prev_timestamp(key: &[u8]) -> i64 {
    let n = key.len();
    match key.get(n.saturating_sub(9)..n.saturating_sub(1)) {
        Some(b) if n >= 9 => {
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            i64::from_be_bytes(a)
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_fits_in_matches_hbase() {
        assert_eq!(long_fits_in(0), 1);
        assert_eq!(long_fits_in(255), 1);
        assert_eq!(long_fits_in(256), 2);
        assert_eq!(long_fits_in(1 << 40), 6);
        assert_eq!(long_fits_in(i64::MAX), 8);
        assert_eq!(long_fits_in(-1), 8);
    }
}
