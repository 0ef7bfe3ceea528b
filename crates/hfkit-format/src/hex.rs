//! Lowercase hex digits of bytes: the byte fields of a cell line (the line is `text`'s).
//! Spec: `formats/hfile.md` §"Cells".
//!
//! A scan printed as cell lines writes two digits for every byte of every row, column and
//! value, so the digits are made many bytes at a time with std only: on x86-64, SSE2 (part of
//! the x86-64 baseline, no run-time detection) turns 16 bytes into 32 digits with a few vector
//! operations; elsewhere a 64-bit word turns 4 bytes into 8 digits ([`hex_of_four`]). A field
//! of 4 to 15 bytes takes two overlapping steps (its first and its last 4 or 8 bytes), so no
//! length costs a loop over single bytes. No crate is used: `hex` and `faster-hex` write into
//! a `&mut [u8]` they check or zero first, while a line is written straight into the spare
//! room of its buffer.

/// Appends `bytes` as lowercase hex, or `-` when empty.
#[inline]
pub fn push_hex(out: &mut String, bytes: &[u8]) {
    if bytes.is_empty() {
        out.push('-');
        return;
    }
    // SAFETY: only ASCII hex digits are written, so the string stays UTF-8.
    let v = unsafe { out.as_mut_vec() };
    let n = bytes.len() * 2;
    v.reserve(n);
    // SAFETY: `reserve` made room for the `n` bytes `write_hex` writes after the length, and
    // it writes every one of them.
    unsafe {
        write_hex(v.as_mut_ptr().add(v.len()), bytes);
        v.set_len(v.len() + n);
    }
}

/// Writes the `2 * bytes.len()` lowercase hex digits of `bytes` at `dst` (nothing for empty).
///
/// # Safety
/// `dst` must be valid for writes of `2 * bytes.len()` bytes, and not overlap `bytes`.
#[inline(always)]
pub unsafe fn write_hex(dst: *mut u8, bytes: &[u8]) {
    let n = bytes.len();
    let s = bytes.as_ptr();
    // SAFETY (every step below): a step reads `W` bytes of `bytes` at an offset `i` with
    // `i + W <= n` and writes their `2 * W` digits at `dst + 2 * i`, within the `2 * n`
    // bytes the caller gave. Overlapping steps write the same digits twice.
    unsafe {
        if n >= 16 {
            let mut i = 0;
            while i + 16 <= n {
                hex16(s.add(i), dst.add(2 * i));
                i += 16;
            }
            if i < n {
                hex16(s.add(n - 16), dst.add(2 * (n - 16)));
            }
        } else if n >= 8 {
            hex8(s, dst);
            hex8(s.add(n - 8), dst.add(2 * (n - 8)));
        } else if n >= 4 {
            hex4(s, dst);
            hex4(s.add(n - 4), dst.add(2 * (n - 4)));
        } else if n > 0 {
            // 1 to 3 bytes: the first, the middle and the last (some the same byte).
            for i in [0, n / 2, n - 1] {
                dst.add(2 * i)
                    .cast::<[u8; 2]>()
                    .write_unaligned(HEX_PAIRS[usize::from(*s.add(i))]);
            }
        }
    }
}

/// 16 bytes at `s` to 32 digits at `d`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn hex16(s: *const u8, d: *mut u8) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_storeu_si128};
    // SAFETY: the caller's: 16 bytes readable at `s`, 32 writable at `d` (unaligned moves).
    unsafe {
        let (lo, hi) = sse2::digits(_mm_loadu_si128(s.cast::<__m128i>()));
        _mm_storeu_si128(d.cast::<__m128i>(), lo);
        _mm_storeu_si128(d.add(16).cast::<__m128i>(), hi);
    }
}

/// 8 bytes at `s` to 16 digits at `d`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn hex8(s: *const u8, d: *mut u8) {
    use std::arch::x86_64::{__m128i, _mm_loadl_epi64, _mm_storeu_si128};
    // SAFETY: the caller's: 8 bytes readable at `s` (`_mm_loadl_epi64` reads 8), 16
    // writable at `d`.
    unsafe {
        let (lo, _) = sse2::digits(_mm_loadl_epi64(s.cast::<__m128i>()));
        _mm_storeu_si128(d.cast::<__m128i>(), lo);
    }
}

/// 4 bytes at `s` to 8 digits at `d`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn hex4(s: *const u8, d: *mut u8) {
    use std::arch::x86_64::{__m128i, _mm_cvtsi32_si128, _mm_storel_epi64};
    // SAFETY: the caller's: 4 bytes readable at `s`, 8 writable at `d` (`_mm_storel_epi64`
    // writes 8).
    unsafe {
        let x = _mm_cvtsi32_si128(s.cast::<i32>().read_unaligned());
        let (lo, _) = sse2::digits(x);
        _mm_storel_epi64(d.cast::<__m128i>(), lo);
    }
}

/// SSE2, which every x86-64 processor has (the target's baseline, so no detection).
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_add_epi8, _mm_and_si128, _mm_cmpgt_epi8, _mm_set1_epi8, _mm_srli_epi16,
        _mm_unpackhi_epi8, _mm_unpacklo_epi8,
    };

    /// The digits of the 16 bytes of `x`: those of bytes 0-7, then of bytes 8-15. Each byte's
    /// nibbles are split and interleaved high first, then each nibble `d` becomes `'0' + d`,
    /// plus `'a' - '0' - 10` where `d > 9` (a signed compare: nibbles are 0-15).
    #[inline(always)]
    pub(super) fn digits(x: __m128i) -> (__m128i, __m128i) {
        // SAFETY: SSE2 is enabled on every x86-64 target (its baseline); these intrinsics
        // only compute on registers.
        unsafe {
            let nibble = _mm_set1_epi8(0x0f);
            let hi = _mm_and_si128(_mm_srli_epi16::<4>(x), nibble);
            let lo = _mm_and_si128(x, nibble);
            let ascii = |d: __m128i| {
                let letter = _mm_and_si128(
                    _mm_cmpgt_epi8(d, _mm_set1_epi8(9)),
                    _mm_set1_epi8((b'a' - b'0' - 10) as i8),
                );
                _mm_add_epi8(_mm_add_epi8(d, _mm_set1_epi8(b'0' as i8)), letter)
            };
            (
                ascii(_mm_unpacklo_epi8(hi, lo)),
                ascii(_mm_unpackhi_epi8(hi, lo)),
            )
        }
    }
}

/// 16 bytes at `s` to 32 digits at `d`.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
unsafe fn hex16(s: *const u8, d: *mut u8) {
    // SAFETY: the caller's, 8 bytes at a time.
    unsafe {
        hex8(s, d);
        hex8(s.add(8), d.add(16));
    }
}

/// 8 bytes at `s` to 16 digits at `d`.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
unsafe fn hex8(s: *const u8, d: *mut u8) {
    // SAFETY: the caller's, 4 bytes at a time.
    unsafe {
        hex4(s, d);
        hex4(s.add(4), d.add(8));
    }
}

/// 4 bytes at `s` to 8 digits at `d`.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
unsafe fn hex4(s: *const u8, d: *mut u8) {
    // SAFETY: the caller's: 4 bytes readable at `s`, 8 writable at `d`.
    unsafe {
        let digits = hex_of_four(s.cast::<[u8; 4]>().read_unaligned());
        d.cast::<[u8; 8]>().write_unaligned(digits);
    }
}

/// The eight lowercase hex digits of four bytes, computed in one 64-bit word: each byte
/// spread into a 16-bit lane, its high nibble in the lane's first byte and its low nibble in
/// the second, then every nibble `d` made `'0' + d`, plus `'a' - '0' - 10` where `d > 9`
/// (no carry crosses a byte: every sum stays under 0x67).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn hex_of_four(b: [u8; 4]) -> [u8; 8] {
    const NIBBLES: u64 = 0x000F_000F_000F_000F;
    const ONES: u64 = 0x0101_0101_0101_0101;
    let x = u64::from(u32::from_le_bytes(b));
    let x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF;
    let x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF;
    let d = ((x >> 4) & NIBBLES) | ((x & NIBBLES) << 8);
    let over_nine = ((d + ONES * 6) >> 4) & ONES;
    (d + ONES * b'0' as u64 + over_nine * u64::from(b'a' - b'0' - 10)).to_le_bytes()
}

/// The two lowercase hex digits of each byte.
const HEX_PAIRS: [[u8; 2]; 256] = {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut t = [[0u8; 2]; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = [DIGITS[i >> 4], DIGITS[i & 15]];
        i += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    /// The digits as `format!` writes them, one byte at a time: the reference.
    fn plain_hex(bytes: &[u8]) -> String {
        match bytes.is_empty() {
            true => "-".to_string(),
            false => bytes.iter().map(|b| format!("{b:02x}")).collect(),
        }
    }

    proptest::proptest! {
        /// Any bytes (any length up to a few 16-byte steps, and so every overlap of the
        /// steps), after any text already in the string.
        #[test]
        fn push_hex_writes_what_format_writes(
            prefix in "[a-z ]{0,20}",
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..80),
        ) {
            let mut s = prefix.clone();
            push_hex(&mut s, &bytes);
            proptest::prop_assert_eq!(s, format!("{prefix}{}", plain_hex(&bytes)));
        }
    }

    /// Every byte value, at every length 0-300 from every place in the 256 values, and
    /// the four-byte word form where it is not the one used.
    #[test]
    fn every_byte_value_at_every_length() {
        let all: Vec<u8> = (0..3).flat_map(|_| 0..=255u8).collect();
        for start in [0, 1, 7, 200, 255] {
            for len in 0..=300 {
                let b = &all[start..start + len];
                let mut s = String::new();
                push_hex(&mut s, b);
                assert_eq!(s, plain_hex(b), "start {start} len {len}");
            }
        }
        for w in all.chunks_exact(4) {
            let digits = hex_of_four([w[0], w[1], w[2], w[3]]);
            assert_eq!(std::str::from_utf8(&digits).unwrap(), plain_hex(w));
        }
    }
}
