//! Encoding PREFIX (id 2): each key stored as the bytes after the prefix it shares with the
//! previous key. Spec: `formats/encodings.md` §"PREFIX".
//!
//! ```text
//! record: compressedInt (keyLength - common) | compressedInt valueLength | compressedInt common
//!         key[common..] | value | suffix (delta.rs)
//! common = 0 for the first cell of a block, else common_prefix(cur, prev, withTsType = true)
//! ```
//! The decoder rebuilds a key as `previousKey[..common] ++ key[common..]`.

use std::ops::Range;

use super::delta::{common_prefix, take_range, DeltaFormat, Prev};
use super::kind::DataBlockEncoding;
use crate::bytes::{put_compressed_int, Cursor};
use crate::cell::CellRef;
use crate::error::{FormatError, Result};

/// PREFIX's record format, plugged into [`super::delta::DeltaEncoder`] / `DeltaDecoder`.
#[derive(Debug, Default)]
pub struct Prefix;

/// PREFIX encoder.
pub type PrefixEncoder = super::delta::DeltaEncoder<Prefix>;
/// PREFIX decoder.
pub type PrefixDecoder = super::delta::DeltaDecoder<Prefix>;

impl DeltaFormat for Prefix {
    const ENCODING: DataBlockEncoding = DataBlockEncoding::Prefix;

    fn write_record(cell: &CellRef<'_>, key: &[u8], prev: Option<&Prev<'_>>, out: &mut Vec<u8>) {
        let common = match prev {
            None => 0,
            Some(p) => common_prefix(&crate::cell::KeyView::of(cell), &p.view, true),
        };
        put_compressed_int(out, (key.len() - common) as u32);
        put_compressed_int(out, cell.value.len() as u32);
        put_compressed_int(out, common as u32);
        out.extend_from_slice(key.get(common..).unwrap_or_default());
        out.extend_from_slice(cell.value);
    }

    fn reset(&mut self) {}

    fn read_record(
        &mut self,
        c: &mut Cursor<'_>,
        at: usize,
        prev_key: &[u8],
        _prev_value: Range<usize>,
        key: &mut Vec<u8>,
    ) -> Result<Range<usize>> {
        let start = c.offset();
        let rest_len = c.compressed_int()? as usize;
        let value_len = c.compressed_int()? as usize;
        let common = c.compressed_int()? as usize;
        let shared = prev_key.get(..common).ok_or_else(|| {
            FormatError::corrupt(
                "cell record",
                start,
                format!(
                    "common prefix {common} is longer than the previous key ({} bytes)",
                    prev_key.len()
                ),
            )
        })?;
        key.extend_from_slice(shared);
        key.extend_from_slice(c.take(rest_len)?);
        take_range(c, at, value_len)
    }
}
