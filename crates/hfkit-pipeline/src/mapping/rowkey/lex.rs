//! The rowkey spec tokenizer: spec text to tokens with their columns (`formats/rowkey.md`
//! §"Syntax").

use crate::error::RowkeyError;
use hfkit_table::cursor::TokenCursor;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Kind {
    Ident(String),
    QuotedField(String),
    Str(Vec<u8>),
    Int(String),
    Plus,
    Comma,
    LParen,
    RParen,
    Eof,
}

#[derive(Clone, Debug)]
pub(super) struct Tok {
    pub(super) kind: Kind,
    /// 1-based character column of the first character.
    pub(super) column: usize,
    /// Byte range in the spec text.
    pub(super) start: usize,
    pub(super) end: usize,
}

pub(super) fn describe(kind: &Kind) -> String {
    match kind {
        Kind::Ident(s) => format!("'{s}'"),
        Kind::QuotedField(s) => format!("`{s}`"),
        Kind::Str(_) => "a string literal".into(),
        Kind::Int(s) => format!("the number {s}"),
        Kind::Plus => "'+'".into(),
        Kind::Comma => "','".into(),
        Kind::LParen => "'('".into(),
        Kind::RParen => "')'".into(),
        Kind::Eof => "the end of the spec".into(),
    }
}

/// The tokens of `text`, in a cursor whose end token is [`Kind::Eof`] just after the last
/// character.
pub(super) fn tokenize(text: &str) -> Result<TokenCursor<Tok>, RowkeyError> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let byte_at = |i: usize| chars.get(i).map_or(text.len(), |c| c.0);
    let syntax = |i: usize, expected: &str, found: String| RowkeyError::Syntax {
        column: i + 1,
        expected: expected.to_string(),
        found,
    };
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i].1;
        let start = i;
        let kind = match c {
            c if c.is_whitespace() => {
                i += 1;
                continue;
            }
            '+' => {
                i += 1;
                Kind::Plus
            }
            ',' => {
                i += 1;
                Kind::Comma
            }
            '(' => {
                i += 1;
                Kind::LParen
            }
            ')' => {
                i += 1;
                Kind::RParen
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                while i < chars.len() && (chars[i].1.is_ascii_alphanumeric() || chars[i].1 == '_') {
                    i += 1;
                }
                Kind::Ident(text[byte_at(start)..byte_at(i)].to_string())
            }
            c if c.is_ascii_digit() => {
                while i < chars.len() && chars[i].1.is_ascii_digit() {
                    i += 1;
                }
                // Digits followed by letters are one word: a span such as `15m`.
                if i < chars.len() && chars[i].1.is_ascii_alphabetic() {
                    while i < chars.len() && chars[i].1.is_ascii_alphanumeric() {
                        i += 1;
                    }
                    Kind::Ident(text[byte_at(start)..byte_at(i)].to_string())
                } else {
                    Kind::Int(text[byte_at(start)..byte_at(i)].to_string())
                }
            }
            '`' => {
                i += 1;
                let name_start = i;
                while i < chars.len() && chars[i].1 != '`' {
                    i += 1;
                }
                if i == chars.len() {
                    return Err(syntax(start, "a closing '`'", "the end of the spec".into()));
                }
                let name = text[byte_at(name_start)..byte_at(i)].to_string();
                if name.is_empty() {
                    return Err(syntax(start, "a field name between '`'", "``".into()));
                }
                i += 1;
                Kind::QuotedField(name)
            }
            '"' | '\'' => {
                let quote_char = c;
                i += 1;
                let mut bytes = Vec::new();
                loop {
                    let Some(&(_, c)) = chars.get(i) else {
                        return Err(syntax(
                            start,
                            &format!("a closing {quote_char}"),
                            "the end of the spec".into(),
                        ));
                    };
                    i += 1;
                    if c == quote_char {
                        break;
                    }
                    if c != '\\' {
                        let mut buf = [0u8; 4];
                        bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                        continue;
                    }
                    let Some(&(_, e)) = chars.get(i) else {
                        return Err(syntax(
                            i,
                            "an escape after '\\'",
                            "the end of the spec".into(),
                        ));
                    };
                    i += 1;
                    match e {
                        'x' => {
                            let hex: String = chars.iter().skip(i).take(2).map(|c| c.1).collect();
                            let v = if hex.len() == 2 && hex.chars().all(|c| c.is_ascii_hexdigit())
                            {
                                u8::from_str_radix(&hex, 16).ok()
                            } else {
                                None
                            };
                            let Some(v) = v else {
                                return Err(syntax(
                                    i - 2,
                                    "two hex digits after '\\x'",
                                    format!("'\\x{hex}'"),
                                ));
                            };
                            bytes.push(v);
                            i += 2;
                        }
                        '\\' | '"' | '\'' => bytes.push(e as u8),
                        'n' => bytes.push(b'\n'),
                        'r' => bytes.push(b'\r'),
                        't' => bytes.push(b'\t'),
                        '0' => bytes.push(0),
                        other => {
                            return Err(syntax(
                                i - 2,
                                "an escape (\\xNN \\\\ \\\" \\' \\n \\r \\t \\0)",
                                format!("'\\{other}'"),
                            ))
                        }
                    }
                }
                Kind::Str(bytes)
            }
            other => {
                return Err(syntax(
                    i,
                    "a field, a string literal, a function call, '+', ',', '(' or ')'",
                    format!("'{}'", other.escape_default()),
                ))
            }
        };
        toks.push(Tok {
            kind,
            column: start + 1,
            start: byte_at(start),
            end: byte_at(i),
        });
    }
    let end = Tok {
        kind: Kind::Eof,
        column: chars.len() + 1,
        start: text.len(),
        end: text.len(),
    };
    Ok(TokenCursor::new(toks, end))
}
