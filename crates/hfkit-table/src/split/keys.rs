//! Split keys as text, as HBase writes them: `Bytes.toBytesBinary` / `Bytes.toStringBinary`,
//! and splits files (`SPLITS_FILE`: one key per line). Prose: `formats/schema.md` §"Splits".
//!
//! Keys written as text (splits files, `SPLITS => [...]`, TOML `keys`) use the convention of
//! HBase's `Bytes.toBytesBinary`: `\xNN` (two upper-case hex digits) is one byte, every other
//! character is itself. See [`to_bytes_binary`] for the two places where we refuse input that
//! HBase would silently misread.

use std::path::Path;

use crate::error::{At, Location, SchemaError};

/// What [`to_bytes_binary`] refuses, at `at`: the character's place in the text, from 1.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BytesBinaryError {
    #[error(
        "escape '\\x{}{}' at character {at}: HBase only decodes upper-case hex digits and would keep it as four characters; write '\\x{}{}'",
        .digits[0], .digits[1], .digits[0].to_ascii_uppercase(), .digits[1].to_ascii_uppercase()
    )]
    LowerCaseEscape { at: usize, digits: [char; 2] },
    #[error(
        "character '{c}' (U+{:04X}) at character {at}: HBase keeps only its low byte; write the intended bytes as \\xNN escapes",
        u32::from(*.c)
    )]
    WideCharacter { at: usize, c: char },
}

/// HBase's `Bytes.toBytesBinary`: `\xNN` with two hex digits is the byte 0xNN, any other
/// character is one byte.
///
/// HBase reads each UTF-16 unit as its low 8 bits and accepts only upper-case hex digits (a
/// lower-case `\xab` is kept as the four characters `\`, `x`, `a`, `b`). Both are silent
/// surprises, so this refuses (with a message saying why) a character above U+00FF and a `\x`
/// followed by two hex digits that are not all upper-case. A `\` not starting such an escape is
/// kept as is, as in HBase.
pub fn to_bytes_binary(s: &str) -> Result<Vec<u8>, BytesBinaryError> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && i + 3 < chars.len() && chars[i + 1] == 'x' {
            let (h1, h2) = (chars[i + 2], chars[i + 3]);
            let upper = |c: char| c.is_ascii_digit() || ('A'..='F').contains(&c);
            if upper(h1) && upper(h2) {
                let d = |c: char| c.to_digit(16).unwrap_or(0) as u8;
                out.push(d(h1) << 4 | d(h2));
                i += 4;
                continue;
            }
            if h1.is_ascii_hexdigit() && h2.is_ascii_hexdigit() {
                return Err(BytesBinaryError::LowerCaseEscape {
                    at: i + 1,
                    digits: [h1, h2],
                });
            }
        }
        let code = c as u32;
        if code > 0xFF {
            return Err(BytesBinaryError::WideCharacter { at: i + 1, c });
        }
        out.push(code as u8);
        i += 1;
    }
    Ok(out)
}

/// HBase's `Bytes.toStringBinary`: printable ASCII except `\` as itself, every other byte as
/// `\xNN` (upper-case). Round-trips through [`to_bytes_binary`].
pub fn to_string_binary(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len());
    push_string_binary(&mut s, bytes);
    s
}

/// [`to_string_binary`] appended to `out` (no allocation beyond `out`'s growth). Runs of
/// bytes kept as they are are found 8 at a time and copied whole.
pub fn push_string_binary(out: &mut String, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    // SAFETY: only ASCII is appended (bytes 0x20..=0x7E, `\`, `x`, hex digits), so the string
    // stays UTF-8.
    let v = unsafe { out.as_mut_vec() };
    let mut rest = bytes;
    loop {
        let n = plain_prefix(rest);
        v.extend_from_slice(&rest[..n]);
        let Some((&b, tail)) = rest[n..].split_first() else {
            break;
        };
        v.extend_from_slice(&[
            b'\\',
            b'x',
            HEX[usize::from(b >> 4)],
            HEX[usize::from(b & 15)],
        ]);
        rest = tail;
    }
}

/// Whether `toStringBinary` keeps `b` as it is: printable ASCII but `\`.
#[inline(always)]
fn is_plain(b: u8) -> bool {
    (b' '..=b'~').contains(&b) && b != b'\\'
}

/// How many bytes from the start of `bytes` `toStringBinary` keeps as they are. Eight bytes at
/// a time: a word has none to escape unless one byte is under 0x20, one over 0x7E or one is `\`
/// (the bit tests of "Bit Twiddling Hacks", exact for whether any byte is such).
#[inline]
fn plain_prefix(bytes: &[u8]) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let mut at = 0;
    while let Some(word) = bytes.get(at..at + 8) {
        let x = u64::from_le_bytes(word.try_into().unwrap_or([0; 8]));
        let below_space = x.wrapping_sub(ONES * 0x20) & !x;
        // 127 - 0x7E = 1 added to each byte: over 0x7E reaches the high bit.
        let above_tilde = x.wrapping_add(ONES) | x;
        let y = x ^ (ONES * u64::from(b'\\'));
        let backslash = y.wrapping_sub(ONES) & !y;
        if (below_space | above_tilde | backslash) & HIGHS != 0 {
            break;
        }
        at += 8;
    }
    at + bytes[at..].iter().take_while(|&&b| is_plain(b)).count()
}

/// Parses a splits file as the HBase shell reads `SPLITS_FILE`: one key per line (the line
/// break `\n`, `\r\n` or `\r` removed), each key in `Bytes.toBytesBinary` syntax. `source` names
/// the file in errors, which carry the line number. An empty line is an empty key, which HBase
/// refuses; so are duplicates (reported by [`Regions::new`]). Keys are returned in file order.
pub fn parse_splits_file(source: &str, text: &str) -> Result<Vec<Vec<u8>>, SchemaError> {
    let mut keys = Vec::new();
    let mut rest = text;
    let mut line_no = 0;
    while !rest.is_empty() {
        line_no += 1;
        let (line, next) = match rest.find('\n') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, ""),
        };
        rest = next;
        let line = line.strip_suffix('\r').unwrap_or(line);
        let at = At::from(Location {
            source: source.to_string(),
            line: line_no,
            column: 1,
        });
        if line.is_empty() {
            return Err(SchemaError::SplitKey {
                at,
                key: String::new(),
                reason: "empty line: HBase refuses an empty split key".into(),
            });
        }
        let key = to_bytes_binary(line).map_err(|e| SchemaError::SplitKey {
            at: at.clone(),
            key: line.to_string(),
            reason: e.to_string(),
        })?;
        keys.push(key);
    }
    Ok(keys)
}

/// Reads and parses a splits file; see [`parse_splits_file`].
pub fn read_splits_file(path: &Path) -> Result<Vec<Vec<u8>>, SchemaError> {
    let bytes = std::fs::read(path).map_err(|source| SchemaError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let text = String::from_utf8(bytes).map_err(|e| SchemaError::SplitKey {
        at: At::from(Location::of_offset(
            &path.display().to_string(),
            &String::from_utf8_lossy(e.as_bytes()),
            e.utf8_error().valid_up_to(),
        )),
        key: String::new(),
        reason: "the file is not UTF-8; write non-text bytes as \\xNN".into(),
    })?;
    parse_splits_file(&path.display().to_string(), &text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `toStringBinary` byte by byte, as HBase writes it.
    fn string_binary_bytewise(bytes: &[u8]) -> String {
        bytes
            .iter()
            .map(|&b| {
                if (b' '..=b'~').contains(&b) && b != b'\\' {
                    char::from(b).to_string()
                } else {
                    format!("\\x{b:02X}")
                }
            })
            .collect()
    }

    #[test]
    fn string_binary_words_and_bytes_agree_on_every_byte_in_every_place() {
        // Each byte value at each place of a 17-byte run of plain bytes (the word test's
        // boundaries), and the plain runs around every byte value.
        for b in 0..=255u8 {
            for at in 0..17 {
                let mut bytes = b"abcdefghijklmnopq".to_vec();
                bytes[at] = b;
                assert_eq!(
                    to_string_binary(&bytes),
                    string_binary_bytewise(&bytes),
                    "{b} at {at}"
                );
            }
        }
    }

    proptest! {
        #[test]
        fn string_binary_words_agree_with_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..80),
                                                plain in proptest::collection::vec(0x20u8..0x7f, 0..40)) {
            let mixed: Vec<u8> = plain.iter().chain(&bytes).chain(&plain).copied().collect();
            prop_assert_eq!(to_string_binary(&mixed), string_binary_bytewise(&mixed));
        }
    }

    #[test]
    fn bytes_binary() {
        assert_eq!(to_bytes_binary("a\\x00b\\xFF").unwrap(), b"a\x00b\xff");
        // A backslash that does not start a full escape is kept.
        assert_eq!(to_bytes_binary("a\\xF").unwrap(), b"a\\xF");
        assert_eq!(to_bytes_binary("\\x0G").unwrap(), b"\\x0G");
        assert_eq!(to_bytes_binary("\\").unwrap(), b"\\");
        // Latin-1 characters are one byte, as in HBase.
        assert_eq!(to_bytes_binary("\u{e9}").unwrap(), [0xE9]);
        let e = to_bytes_binary("ab\\xff").unwrap_err();
        assert_eq!(
            e,
            BytesBinaryError::LowerCaseEscape {
                at: 3,
                digits: ['f', 'f']
            }
        );
        assert_eq!(
            e.to_string(),
            "escape '\\xff' at character 3: HBase only decodes upper-case hex digits and would \
             keep it as four characters; write '\\xFF'"
        );
        let e = to_bytes_binary("a€").unwrap_err();
        assert_eq!(e, BytesBinaryError::WideCharacter { at: 2, c: '€' });
        assert_eq!(
            e.to_string(),
            "character '€' (U+20AC) at character 2: HBase keeps only its low byte; write the \
             intended bytes as \\xNN escapes"
        );
        assert_eq!(to_string_binary(b"a\\b\x00\x7f~ "), "a\\x5Cb\\x00\\x7F~ ");
    }

    #[test]
    fn splits_file() {
        let keys = parse_splits_file("s.txt", "a\r\nb\\x00\nc").unwrap();
        assert_eq!(keys, [b"a".to_vec(), b"b\x00".to_vec(), b"c".to_vec()]);
        assert_eq!(parse_splits_file("s.txt", "a\nb\n").unwrap().len(), 2);
        let e = parse_splits_file("s.txt", "a\n\nb\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("s.txt:2:1: ") && e.contains("empty"), "{e}");
        let e = parse_splits_file("s.txt", "a\nb\\xab\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("s.txt:2:1: ") && e.contains("upper-case"),
            "{e}"
        );
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("splits");
        std::fs::write(&p, b"k1\n\xff\n").unwrap();
        let e = read_splits_file(&p).unwrap_err().to_string();
        assert!(e.contains(":2:1: ") && e.contains("not UTF-8"), "{e}");
        assert!(matches!(
            read_splits_file(&dir.path().join("missing")),
            Err(SchemaError::Io { .. })
        ));
    }

    proptest! {
        #[test]
        fn string_binary_round_trips(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            prop_assert_eq!(to_bytes_binary(&to_string_binary(&bytes)).unwrap(), bytes);
        }
    }
}
