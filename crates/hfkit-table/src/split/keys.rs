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

/// [`to_string_binary`] appended to `out` (no allocation beyond `out`'s growth).
pub fn push_string_binary(out: &mut String, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in bytes {
        if (b' '..=b'~').contains(&b) && b != b'\\' {
            out.push(b as char);
        } else {
            out.push_str("\\x");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 15)]));
        }
    }
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
