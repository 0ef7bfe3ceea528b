//! Primitive encodings: a bounds-checked big-endian cursor, Hadoop VInt/VLong, and HBase's
//! "compressed int" (unsigned LEB128). Spec: `formats/hfile.md` §"Primitive encodings".
//!
//! HFile is big-endian throughout, except where the spec says otherwise (DIFF timestamps,
//! hash words, compressed ints). Every read goes through [`Cursor`], which returns
//! [`FormatError::Truncated`] with the absolute file offset instead of panicking.

use super::error::{FormatError, Result};

/// A read cursor over a byte slice that knows the slice's absolute offset in the file.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    base: u64,
    what: &'static str,
}

impl<'a> Cursor<'a> {
    /// A cursor over `data`, whose first byte is at file offset `base`. `what` names the
    /// structure being decoded, for error messages.
    pub fn new(data: &'a [u8], base: u64, what: &'static str) -> Self {
        Cursor {
            data,
            pos: 0,
            base,
            what,
        }
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Absolute file offset of the next byte.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Bytes left.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// True when every byte has been consumed.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    /// The unread part.
    pub fn rest(&self) -> &'a [u8] {
        &self.data[self.pos..]
    }

    fn truncated(&self, needed: usize) -> FormatError {
        FormatError::Truncated {
            what: self.what,
            offset: self.offset(),
            needed: needed as u64,
            available: self.remaining() as u64,
        }
    }

    /// Takes the next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.truncated(n));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// Skips `n` bytes.
    pub fn skip(&mut self, n: usize) -> Result<()> {
        self.take(n).map(|_| ())
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }
    pub fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_be_bytes(self.array()?))
    }
    pub fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_be_bytes(self.array()?))
    }
    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_be_bytes(self.array()?))
    }
    pub fn i64(&mut self) -> Result<i64> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    /// A Hadoop VLong (`WritableUtils.readVLong`).
    pub fn vlong(&mut self) -> Result<i64> {
        let at = self.offset();
        let first = self.u8()? as i8;
        let n = vlong_total_len(first);
        if n == 1 {
            return Ok(first as i64);
        }
        let mut x: i64 = 0;
        for _ in 0..n - 1 {
            x = (x << 8) | self.u8()? as i64;
        }
        let _ = at;
        Ok(if first < -120 { !x } else { x })
    }

    /// A Hadoop VInt: a VLong that must fit in an i32.
    pub fn vint(&mut self) -> Result<i32> {
        let at = self.offset();
        let v = self.vlong()?;
        i32::try_from(v)
            .map_err(|_| FormatError::corrupt(self.what, at, format!("vint {v} overflows")))
    }

    /// A VInt that is a length: non-negative.
    pub fn vint_len(&mut self) -> Result<usize> {
        let at = self.offset();
        let v = self.vint()?;
        usize::try_from(v)
            .map_err(|_| FormatError::corrupt(self.what, at, format!("negative length {v}")))
    }

    /// HBase's compressed int (`ByteBufferUtils.readCompressedInt`): LEB128, at most 5 bytes.
    pub fn compressed_int(&mut self) -> Result<u32> {
        let at = self.offset();
        let mut result: u32 = 0;
        for i in 0..5 {
            let b = self.u8()?;
            result |= ((b & 0x7f) as u32) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(result);
            }
        }
        Err(FormatError::corrupt(
            self.what,
            at,
            "compressed int longer than 5 bytes",
        ))
    }

    /// A protobuf-style base-128 varint (at most 10 bytes).
    pub fn varint(&mut self) -> Result<u64> {
        let at = self.offset();
        let mut result: u64 = 0;
        for i in 0..10 {
            let b = self.u8()?;
            result |= ((b & 0x7f) as u64) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(result);
            }
        }
        Err(FormatError::corrupt(
            self.what,
            at,
            "varint longer than 10 bytes",
        ))
    }
}

/// Total encoded length (first byte included) of a Hadoop VLong whose first byte is `first`.
pub fn vlong_total_len(first: i8) -> usize {
    if first >= -112 {
        1
    } else if first < -120 {
        (-119 - first as i32) as usize
    } else {
        (-111 - first as i32) as usize
    }
}

/// Appends a Hadoop VLong (`WritableUtils.writeVLong`).
pub fn put_vlong(out: &mut Vec<u8>, value: i64) {
    if (-112..=127).contains(&value) {
        out.push(value as u8);
        return;
    }
    let mut i = value;
    let mut len: i32 = -112;
    if i < 0 {
        i = !i;
        len = -120;
    }
    let mut tmp = i;
    while tmp != 0 {
        tmp >>= 8;
        len -= 1;
    }
    out.push(len as i8 as u8);
    let n = if len < -120 {
        -(len + 120)
    } else {
        -(len + 112)
    };
    for idx in (0..n).rev() {
        out.push((i >> (idx * 8)) as u8);
    }
}

/// Size in bytes of `value` as a Hadoop VLong.
pub fn vlong_size(value: i64) -> usize {
    if (-112..=127).contains(&value) {
        return 1;
    }
    let v = if value < 0 { !value } else { value };
    let bits = 64 - v.leading_zeros() as usize;
    1 + bits.div_ceil(8)
}

/// Appends HBase's compressed int (unsigned LEB128 of the value's 32 bits).
pub fn put_compressed_int(out: &mut Vec<u8>, value: u32) {
    let mut v = value;
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// Appends a protobuf varint.
pub fn put_varint(out: &mut Vec<u8>, value: u64) {
    let mut v = value;
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vlong_examples_from_hadoop() {
        let cases: &[(i64, &[u8])] = &[
            (0, &[0x00]),
            (1, &[0x01]),
            (127, &[0x7f]),
            (128, &[0x8f, 0x80]),
            (255, &[0x8f, 0xff]),
            (256, &[0x8e, 0x01, 0x00]),
            (1000, &[0x8e, 0x03, 0xe8]),
            (-1, &[0xff]),
            (-112, &[0x90]),
            (-113, &[0x87, 0x70]),
            (1 << 31, &[0x8c, 0x80, 0, 0, 0]),
            (
                i64::MAX,
                &[0x88, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            ),
        ];
        for (v, bytes) in cases {
            let mut out = Vec::new();
            put_vlong(&mut out, *v);
            assert_eq!(&out[..], *bytes, "encode {v}");
            assert_eq!(vlong_size(*v), bytes.len(), "size {v}");
            let mut c = Cursor::new(bytes, 0, "test");
            assert_eq!(c.vlong().unwrap(), *v, "decode {v}");
            assert!(c.is_empty());
        }
    }

    #[test]
    fn vlong_round_trip_edges() {
        for v in [
            i64::MIN,
            i64::MIN + 1,
            -1 << 40,
            -129,
            -128,
            1 << 56,
            (1 << 56) - 1,
        ] {
            let mut out = Vec::new();
            put_vlong(&mut out, v);
            assert_eq!(out.len(), vlong_size(v));
            assert_eq!(Cursor::new(&out, 0, "t").vlong().unwrap(), v);
        }
    }

    #[test]
    fn compressed_int_round_trip_and_limits() {
        for v in [0u32, 1, 127, 128, 16383, 16384, u32::MAX] {
            let mut out = Vec::new();
            put_compressed_int(&mut out, v);
            assert_eq!(Cursor::new(&out, 0, "t").compressed_int().unwrap(), v);
        }
        let six = [0x80u8, 0x80, 0x80, 0x80, 0x80, 0x01];
        assert!(Cursor::new(&six, 0, "t").compressed_int().is_err());
    }

    #[test]
    fn truncation_reports_offset() {
        let mut c = Cursor::new(&[1, 2, 3], 100, "thing");
        c.u8().unwrap();
        match c.i32() {
            Err(FormatError::Truncated {
                offset,
                needed,
                available,
                ..
            }) => {
                assert_eq!((offset, needed, available), (101, 4, 2));
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
