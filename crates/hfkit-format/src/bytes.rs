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

    /// A protobuf base-128 varint (at most 10 bytes, at most 64 bits), decoded by prost.
    pub fn varint(&mut self) -> Result<u64> {
        let mut rest = self.rest();
        match prost::encoding::decode_varint(&mut rest) {
            Ok(v) => {
                self.pos = self.data.len() - rest.len();
                Ok(v)
            }
            // Every byte left says another follows: the varint runs past the end.
            Err(_) if self.remaining() < 10 && self.rest().iter().all(|b| b & 0x80 != 0) => {
                self.pos = self.data.len();
                Err(self.truncated(1))
            }
            Err(_) => Err(FormatError::corrupt(
                self.what,
                self.offset(),
                "varint longer than 10 bytes or over 64 bits",
            )),
        }
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

/// Copies `src` to `dst`, pieces of at most 32 bytes by two possibly overlapping fixed-size
/// loads and stores instead of a `memcpy` call (the cell serializers' hot path: a NONE cell is
/// seven small pieces, and per-piece `extend_from_slice` bookkeeping, bounds checks and
/// `memcpy` calls cost more than the copying). Reads stay inside `src`.
///
/// # Safety
///
/// `dst` must be valid for `src.len()` bytes of writes and not overlap `src`.
#[inline(always)]
pub unsafe fn copy_short(dst: *mut u8, src: &[u8]) {
    let n = src.len();
    let s = src.as_ptr();
    // SAFETY: the caller's contract for `dst`; every read is within `src` (n bytes: the two
    // 16-, 8- or 4-byte loads cover [0, 16) and [n - 16, n) with n >= 16, resp. [0, 8) and
    // [n - 8, n) with n >= 8, resp. the same with 4 and n >= 4).
    unsafe {
        if (8..=16).contains(&n) {
            let head = s.cast::<u64>().read_unaligned();
            let tail = s.add(n - 8).cast::<u64>().read_unaligned();
            dst.cast::<u64>().write_unaligned(head);
            dst.add(n - 8).cast::<u64>().write_unaligned(tail);
        } else if (4..8).contains(&n) {
            let head = s.cast::<u32>().read_unaligned();
            let tail = s.add(n - 4).cast::<u32>().read_unaligned();
            dst.cast::<u32>().write_unaligned(head);
            dst.add(n - 4).cast::<u32>().write_unaligned(tail);
        } else if n < 4 {
            for i in 0..n {
                *dst.add(i) = *s.add(i);
            }
        } else if n <= 32 {
            // 17..=32: two 16-byte pieces, [0, 16) and [n - 16, n).
            let head = s.cast::<u128>().read_unaligned();
            let tail = s.add(n - 16).cast::<u128>().read_unaligned();
            dst.cast::<u128>().write_unaligned(head);
            dst.add(n - 16).cast::<u128>().write_unaligned(tail);
        } else {
            std::ptr::copy_nonoverlapping(s, dst, n);
        }
    }
}

/// `out.extend_from_slice(src)` for small pieces: one capacity check and [`copy_short`]
/// instead of a `memcpy` call (the import's per-cell qualifier and value copies).
#[inline(always)]
pub fn extend_short(out: &mut Vec<u8>, src: &[u8]) {
    out.reserve(src.len());
    let len = out.len();
    // SAFETY: `reserve` made room for `src.len()` bytes after `len`, which `copy_short` writes
    // in full before the length covers them; `src` cannot overlap `out`'s spare capacity.
    unsafe {
        copy_short(out.as_mut_ptr().add(len), src);
        out.set_len(len + src.len());
    }
}

/// Appends `pieces` in order with one capacity check and [`copy_short`] each (a record's
/// header, row, qualifier and value: the sorter's arena and batches, per cell).
#[inline(always)]
pub fn extend_pieces<const N: usize>(out: &mut Vec<u8>, pieces: [&[u8]; N]) {
    let total: usize = pieces.iter().map(|p| p.len()).sum();
    out.reserve(total);
    let start = out.len();
    // SAFETY: `reserve` made room for `total` bytes after `start`; the pieces are copied one
    // after another into exactly that room (their lengths add up to `total`) before the length
    // covers it, and none can overlap `out`'s spare capacity.
    unsafe {
        let mut d = out.as_mut_ptr().add(start);
        for p in pieces {
            copy_short(d, p);
            d = d.add(p.len());
        }
        out.set_len(start + total);
    }
}

#[inline(always)]
fn be64(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[..8]);
    u64::from_be_bytes(w)
}

/// Byte-order comparison of two slices (`a.cmp(b)`), with common prefixes of at most 16
/// bytes compared as two big-endian words instead of a `memcmp` call (rows, families and
/// qualifiers are mostly that short; the writer and readers compare them per cell).
#[inline(always)]
pub fn compare_bytes(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let n = a.len().min(b.len());
    if (8..=16).contains(&n) {
        // Words [0, 8) and [n - 8, n) cover the common prefix; the second overlaps the first,
        // whose bytes are equal by then, so its first difference is the prefix's first.
        let (x, y) = (be64(a), be64(b));
        if x != y {
            return x.cmp(&y);
        }
        let (x, y) = (be64(&a[n - 8..]), be64(&b[n - 8..]));
        if x != y {
            return x.cmp(&y);
        }
        return a.len().cmp(&b.len());
    }
    if n < 8 {
        for i in 0..n {
            if a[i] != b[i] {
                return a[i].cmp(&b[i]);
            }
        }
        return a.len().cmp(&b.len());
    }
    a.cmp(b)
}

/// `a == b` for short byte strings (rows, families, qualifiers compared per cell by the writer
/// and the readers): two possibly overlapping word loads per side instead of a `bcmp` call,
/// which costs more than the comparing at these lengths.
#[inline(always)]
pub fn equal_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    #[inline(always)]
    fn word<const W: usize>(s: &[u8], at: usize) -> [u8; W] {
        let mut w = [0u8; W];
        w.copy_from_slice(&s[at..at + W]);
        w
    }
    match n {
        0 => true,
        1..=3 => a.iter().zip(b).all(|(x, y)| x == y),
        4..=7 => word::<4>(a, 0) == word::<4>(b, 0) && word::<4>(a, n - 4) == word::<4>(b, n - 4),
        8..=16 => word::<8>(a, 0) == word::<8>(b, 0) && word::<8>(a, n - 8) == word::<8>(b, n - 8),
        17..=32 => {
            word::<16>(a, 0) == word::<16>(b, 0) && word::<16>(a, n - 16) == word::<16>(b, n - 16)
        }
        _ => a == b,
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{Cursor, FormatError};

    #[test]
    fn varints_decode_as_protobuf_writes_them_and_fail_cleanly() {
        for v in [0u64, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut b = Vec::new();
            prost::encoding::encode_varint(v, &mut b);
            b.push(0xAB);
            let mut c = Cursor::new(&b, 0, "t");
            assert_eq!(c.varint().unwrap(), v);
            assert_eq!(c.rest(), [0xAB]);
        }
        let short = Cursor::new(&[0x80, 0x80], 7, "t").varint();
        assert!(
            matches!(short, Err(FormatError::Truncated { offset: 9, .. })),
            "{short:?}"
        );
        let long = Cursor::new(&[0xFF; 11], 0, "t").varint();
        assert!(matches!(long, Err(FormatError::Corrupt { .. })), "{long:?}");
    }

    #[test]
    fn equal_bytes_agrees_with_slice_equality_at_every_length() {
        let a: Vec<u8> = (0..80u8).collect();
        for n in 0..80 {
            assert!(super::equal_bytes(&a[..n], &a[..n]));
            // Lengths differ.
            assert!(!super::equal_bytes(&a[..n], &a[..n + 1]));
            // One byte differs, at every position (the head word, the tail word, the middle).
            for i in 0..n {
                let mut b = a[..n].to_vec();
                b[i] ^= 0x40;
                assert!(!super::equal_bytes(&a[..n], &b), "n {n} i {i}");
            }
        }
    }

    #[test]
    fn extend_short_appends_every_length() {
        let src: Vec<u8> = (0..40u8).collect();
        for n in 0..=src.len() {
            let mut out = vec![9u8; 3];
            super::extend_short(&mut out, &src[..n]);
            assert_eq!(&out[..3], &[9, 9, 9]);
            assert_eq!(&out[3..], &src[..n], "length {n}");
        }
    }

    proptest! {
        /// The short-slice helpers agree with the standard library on every length mix
        /// (around the 4-, 8-, 16- and 32-byte boundaries where their code paths change).
        #[test]
        fn short_slice_helpers_match_std(
            a in proptest::collection::vec(0u8..4, 0..40),
            b in proptest::collection::vec(0u8..4, 0..40),
            parts in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..48), 0..8),
        ) {
            prop_assert_eq!(compare_bytes(&a, &b), a.cmp(&b));
            prop_assert_eq!(equal_bytes(&a, &b), a == b);
            prop_assert_eq!(compare_bytes(&a, &a), std::cmp::Ordering::Equal);
            let total: usize = parts.iter().map(Vec::len).sum();
            let mut out = vec![0u8; 1 + total];
            out[0] = 7;
            let mut at = 1;
            for p in &parts {
                // SAFETY: `out` has `1 + total` bytes and the pieces are placed back to back
                // from 1, so each `p.len()`-byte write stays inside it; `p` is another buffer.
                unsafe { copy_short(out.as_mut_ptr().add(at), p) };
                at += p.len();
            }
            let mut want = vec![7u8];
            want.extend(parts.concat());
            prop_assert_eq!(out, want.clone());
            // Four pieces at once, as the sorter appends a record.
            let mut out = vec![7u8];
            let piece = |i: usize| parts.get(i).map_or(&[][..], |p| p.as_slice());
            extend_pieces(&mut out, [piece(0), piece(1), piece(2), piece(3)]);
            let mut want = vec![7u8];
            want.extend(parts.iter().take(4).flatten());
            prop_assert_eq!(out, want);
        }
    }

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
