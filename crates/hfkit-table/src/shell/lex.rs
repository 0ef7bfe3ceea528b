//! The tokens of the shell form (`formats/schema.md` §"HBase shell form"): punctuation, `=>`,
//! integers, identifiers and constants, single- and double-quoted strings with Ruby's escapes,
//! `#` comments. A Ruby expression (an operator, a method call) is refused here with the
//! literal form to write instead: the shell form is read, not run.

use crate::cursor::TokenCursor;
use crate::error::{At, Location, SchemaError};

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Kind {
    Ident(String),
    Str(String),
    Int(i64),
    Arrow,
    Comma,
    Semicolon,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    LParen,
    RParen,
    Eof,
}

#[derive(Clone, Debug)]
pub(super) struct Tok {
    pub(super) kind: Kind,
    /// Byte offset in the text.
    pub(super) offset: usize,
}

pub(super) fn describe(k: &Kind) -> String {
    match k {
        Kind::Ident(s) => format!("'{s}'"),
        Kind::Str(s) => format!("the string '{s}'"),
        Kind::Int(i) => format!("the number {i}"),
        Kind::Arrow => "'=>'".into(),
        Kind::Comma => "','".into(),
        Kind::Semicolon => "';'".into(),
        Kind::LBrace => "'{'".into(),
        Kind::RBrace => "'}'".into(),
        Kind::LBracket => "'['".into(),
        Kind::RBracket => "']'".into(),
        Kind::LParen => "'('".into(),
        Kind::RParen => "')'".into(),
        Kind::Eof => "the end of the statement".into(),
    }
}

pub(super) fn syntax(source: &str, text: &str, offset: usize, message: String) -> SchemaError {
    SchemaError::Syntax {
        at: At::from(Location::of_offset(source, text, offset)),
        message,
    }
}

/// The tokens of `text`, in a cursor whose end token is [`Kind::Eof`] at the end of `text`.
pub(super) fn tokenize(text: &str, source: &str) -> Result<TokenCursor<Tok>, SchemaError> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let off = |i: usize| chars.get(i).map_or(text.len(), |c| c.0);
    let err = |i: usize, m: String| syntax(source, text, off(i), m);
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i].1;
        let start = i;
        let simple = match c {
            ',' => Some(Kind::Comma),
            ';' => Some(Kind::Semicolon),
            '{' => Some(Kind::LBrace),
            '}' => Some(Kind::RBrace),
            '[' => Some(Kind::LBracket),
            ']' => Some(Kind::RBracket),
            '(' => Some(Kind::LParen),
            ')' => Some(Kind::RParen),
            _ => None,
        };
        if let Some(kind) = simple {
            toks.push(Tok {
                kind,
                offset: off(i),
            });
            i += 1;
            continue;
        }
        let kind = match c {
            c if c.is_whitespace() => {
                i += 1;
                continue;
            }
            '#' => {
                while i < chars.len() && chars[i].1 != '\n' {
                    i += 1;
                }
                continue;
            }
            '=' if chars.get(i + 1).map(|c| c.1) == Some('>') => {
                i += 2;
                Kind::Arrow
            }
            c if c.is_ascii_digit()
                || (c == '-' && chars.get(i + 1).is_some_and(|c| c.1.is_ascii_digit())) =>
            {
                i += 1;
                while i < chars.len() && (chars[i].1.is_ascii_digit() || chars[i].1 == '_') {
                    i += 1;
                }
                if chars.get(i).map(|c| c.1) == Some('.')
                    && chars.get(i + 1).is_some_and(|c| c.1.is_ascii_digit())
                {
                    return Err(err(
                        start,
                        "expected an integer, found a floating-point number".into(),
                    ));
                }
                let digits: String = text[off(start)..off(i)]
                    .chars()
                    .filter(|&c| c != '_')
                    .collect();
                let v = digits
                    .parse::<i64>()
                    .map_err(|_| err(start, format!("integer {digits} is out of range")))?;
                Kind::Int(v)
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                while i < chars.len() && (chars[i].1.is_ascii_alphanumeric() || chars[i].1 == '_') {
                    i += 1;
                }
                Kind::Ident(text[off(start)..off(i)].to_string())
            }
            '\'' => {
                i += 1;
                let mut s = String::new();
                loop {
                    let Some(&(_, c)) = chars.get(i) else {
                        return Err(err(start, "expected a closing ' for this string".into()));
                    };
                    i += 1;
                    match c {
                        '\'' => break,
                        '\\' if matches!(chars.get(i).map(|c| c.1), Some('\\') | Some('\'')) => {
                            s.push(chars[i].1);
                            i += 1;
                        }
                        c => s.push(c),
                    }
                }
                Kind::Str(s)
            }
            '"' => {
                i += 1;
                let mut s = String::new();
                loop {
                    let Some(&(_, c)) = chars.get(i) else {
                        return Err(err(start, "expected a closing \" for this string".into()));
                    };
                    i += 1;
                    match c {
                        '"' => break,
                        '#' if chars.get(i).map(|c| c.1) == Some('{') => {
                            return Err(err(
                                i - 1,
                                "string interpolation #{...} is not supported".into(),
                            ));
                        }
                        '\\' => {
                            let esc_at = i - 1;
                            let Some(&(_, e)) = chars.get(i) else {
                                return Err(err(esc_at, "expected an escape after '\\'".into()));
                            };
                            i += 1;
                            let byte_escape = |v: u32| -> Result<char, SchemaError> {
                                if v >= 0x80 {
                                    Err(err(
                                        esc_at,
                                        format!(
                                            "escape for byte 0x{v:02X} in a double-quoted string: the shell \
                                             turns bytes >= 0x80 into invalid text; use a single-quoted \
                                             '\\x{v:02X}' (Bytes.toBytesBinary) instead"
                                        ),
                                    ))
                                } else {
                                    Ok(char::from(v as u8))
                                }
                            };
                            match e {
                                'n' => s.push('\n'),
                                't' => s.push('\t'),
                                'r' => s.push('\r'),
                                's' => s.push(' '),
                                'e' => s.push('\x1b'),
                                'a' => s.push('\x07'),
                                'b' => s.push('\x08'),
                                'f' => s.push('\x0c'),
                                'v' => s.push('\x0b'),
                                '\n' => {}
                                'x' => {
                                    let mut v = 0u32;
                                    let mut n = 0;
                                    while n < 2 {
                                        match chars.get(i).and_then(|c| c.1.to_digit(16)) {
                                            Some(d) => {
                                                v = v * 16 + d;
                                                i += 1;
                                                n += 1;
                                            }
                                            None => break,
                                        }
                                    }
                                    if n == 0 {
                                        return Err(err(
                                            esc_at,
                                            "expected hex digits after \\x".into(),
                                        ));
                                    }
                                    s.push(byte_escape(v)?);
                                }
                                '0'..='7' => {
                                    let mut v = e.to_digit(8).unwrap_or(0);
                                    let mut n = 1;
                                    while n < 3 {
                                        match chars.get(i).and_then(|c| c.1.to_digit(8)) {
                                            Some(d) => {
                                                v = v * 8 + d;
                                                i += 1;
                                                n += 1;
                                            }
                                            None => break,
                                        }
                                    }
                                    s.push(byte_escape(v)?);
                                }
                                'u' => {
                                    let (digits, braced): (String, bool) = if chars
                                        .get(i)
                                        .map(|c| c.1)
                                        == Some('{')
                                    {
                                        let d: String = chars[i + 1..]
                                            .iter()
                                            .map(|c| c.1)
                                            .take_while(|&c| c != '}')
                                            .collect();
                                        (d, true)
                                    } else {
                                        (chars[i..].iter().map(|c| c.1).take(4).collect(), false)
                                    };
                                    let valid_len = if braced {
                                        (1..=6).contains(&digits.len())
                                    } else {
                                        digits.len() == 4
                                    };
                                    let ch = valid_len
                                        .then(|| u32::from_str_radix(&digits, 16).ok())
                                        .flatten()
                                        .and_then(char::from_u32)
                                        .ok_or_else(|| {
                                            err(esc_at, "expected \\uXXXX or \\u{X..}".into())
                                        })?;
                                    // Braced: '{' digits '}'.
                                    i += if braced { digits.len() + 2 } else { 4 };
                                    s.push(ch);
                                }
                                other => s.push(other),
                            }
                        }
                        c => s.push(c),
                    }
                }
                Kind::Str(s)
            }
            other if RUBY_OPERATORS.contains(other) => {
                return Err(ruby_expression(source, text, &toks, off(i), other));
            }
            other => {
                return Err(err(
                    i,
                    format!(
                        "expected a string, number, constant, '{{', '[', '=>' or ',', found '{}'",
                        other.escape_default()
                    ),
                ))
            }
        };
        toks.push(Tok {
            kind,
            offset: off(start),
        });
    }
    let end = Tok {
        kind: Kind::Eof,
        offset: text.len(),
    };
    Ok(TokenCursor::new(toks, end))
}

/// Characters that only appear in Ruby expressions (method calls, ranges, blocks, arithmetic),
/// never in the literals `create` is read as.
const RUBY_OPERATORS: &str = ".|%*+-/&!?<>^~=";

/// An example of the literal split points to write instead of an expression.
const LITERAL_SPLITS: &str = "SPLITS => ['10', '20', '30']";

/// The error for a Ruby expression, found at `offset` (the character or token `found`) after
/// the tokens `before`: the shell form is read, not run. The message quotes the expression
/// from its start and, for `SPLITS`, shows the literal form to use instead.
pub(super) fn ruby_expression(
    source: &str,
    text: &str,
    before: &[Tok],
    offset: usize,
    found: char,
) -> SchemaError {
    // The expression starts after the `=>`, ',' or open '[' / '{' that precedes it (a '('
    // other than the statement's own is part of the expression).
    let mut depth = 0usize;
    let mut start = 0;
    for (i, t) in before.iter().enumerate().rev() {
        match t.kind {
            Kind::RParen | Kind::RBracket | Kind::RBrace => depth += 1,
            Kind::LParen if depth == 0 && i != 1 => {}
            Kind::LParen | Kind::LBracket | Kind::LBrace if depth > 0 => depth -= 1,
            Kind::LParen | Kind::LBracket | Kind::LBrace | Kind::Arrow | Kind::Comma
                if depth == 0 =>
            {
                start = i + 1;
                break;
            }
            _ => {}
        }
    }
    let from = before.get(start).map_or(offset, |t| t.offset).min(offset);
    let line = text[from..].lines().next().unwrap_or_default().trim_end();
    let excerpt = match line.char_indices().nth(40) {
        Some((cut, _)) => format!("{}...", &line[..cut]),
        None => line.to_string(),
    };
    // The key whose value it is (in an array of values: the array's key).
    let mut k = start;
    while k > 0 && before[k - 1].kind == Kind::LBracket {
        k -= 1;
    }
    let key = match k
        .checked_sub(2)
        .map(|n| (&before[n].kind, &before[n + 1].kind))
    {
        Some((Kind::Ident(name) | Kind::Str(name), Kind::Arrow)) => Some(name.as_str()),
        _ => None,
    };
    let instead = match key {
        Some("SPLITS") => format!(
            "write the split points as a literal array, e.g. {LITERAL_SPLITS}, or compute \
             them with `hfkit plan --regions N`, or use NUMREGIONS => N with SPLITALGO, or a \
             TOML schema's [splits] section"
        ),
        Some(k) => format!(
            "write the value of {k} as a literal (a string, an integer, true/false, [...] or \
             {{...}})"
        ),
        None => "write literals only (strings, integers, true/false, [...] and {...})".into(),
    };
    syntax(
        source,
        text,
        offset,
        format!(
            "found '{found}' in `{excerpt}`: Ruby expressions are not evaluated (the shell \
             form is read, not run); {instead}"
        ),
    )
}
