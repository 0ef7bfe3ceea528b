//! The rowkey spec parser: tokens to the AST of [`super::RowkeySpec`], checking each
//! function's arguments (`formats/rowkey.md` §"Syntax" and §"Functions").

use super::lex::{describe, Kind, Tok};
use super::{BucketUnit, Func, Node, TsFormat, TsUnit};
use crate::error::RowkeyError;
use hfkit_format::cell::MAX_ROW_LEN;
use hfkit_table::cursor::TokenCursor;

/// Functions of the language, for messages.
const KNOWN_FUNCTIONS: &str =
    "salt, salt_letter, mod, hash_prefix, reverse, reverse_domain, reverse_ts, bucket, pad, i64be, f64be";
/// Deepest nesting of calls a spec may have.
const MAX_DEPTH: usize = 32;
/// Largest `salt` bucket count.
const MAX_SALT_BUCKETS: u64 = 1_000_000;
/// MD5 as hex has 32 characters.
const MD5_HEX_LEN: u64 = 32;

pub(super) fn assign_slots(nodes: &mut [Node], fields: &mut Vec<String>) {
    for n in nodes {
        match n {
            Node::Literal(_) => {}
            Node::Field { slot, name } => {
                *slot = match fields.iter().position(|f| f == name) {
                    Some(i) => i,
                    None => {
                        fields.push(name.clone());
                        fields.len() - 1
                    }
                };
            }
            Node::Call { input, .. } => assign_slots(input, fields),
        }
    }
}

enum Arg {
    Int { value: String, column: usize },
    Expr { nodes: Vec<Node>, column: usize },
}

impl Arg {
    fn column(&self) -> usize {
        match self {
            Arg::Int { column, .. } | Arg::Expr { column, .. } => *column,
        }
    }

    /// A bare word or string used as an option (`day`, `"bin"`).
    fn word(&self) -> Option<String> {
        match self {
            Arg::Expr { nodes, .. } => match nodes.as_slice() {
                [Node::Field { name, .. }] => Some(name.clone()),
                [Node::Literal(b)] => String::from_utf8(b.clone()).ok(),
                _ => None,
            },
            Arg::Int { .. } => None,
        }
    }
}

pub(super) struct Parser<'t> {
    pub(super) text: &'t str,
    /// The spec's tokens, ending in [`Kind::Eof`].
    pub(super) toks: TokenCursor<Tok>,
    pub(super) depth: usize,
}

impl Parser<'_> {
    pub(super) fn peek(&self) -> &Tok {
        self.toks.peek()
    }

    fn next(&mut self) -> Tok {
        self.toks.next()
    }

    pub(super) fn unexpected(&self, expected: &str) -> RowkeyError {
        let t = self.peek();
        RowkeyError::Syntax {
            column: t.column,
            expected: expected.to_string(),
            found: describe(&t.kind),
        }
    }

    pub(super) fn concat(&mut self) -> Result<Vec<Node>, RowkeyError> {
        let mut nodes = vec![self.term()?];
        while self.peek().kind == Kind::Plus {
            self.next();
            nodes.push(self.term()?);
        }
        Ok(nodes)
    }

    fn term(&mut self) -> Result<Node, RowkeyError> {
        let t = self.peek().clone();
        match t.kind {
            Kind::Str(bytes) => {
                self.next();
                Ok(Node::Literal(bytes))
            }
            Kind::QuotedField(name) => {
                self.next();
                Ok(Node::Field { slot: 0, name })
            }
            Kind::Ident(name) => {
                self.next();
                if self.peek().kind == Kind::LParen {
                    self.call(name, t.column)
                } else {
                    Ok(Node::Field { slot: 0, name })
                }
            }
            _ => Err(self.unexpected("a field, a string literal or a function call")),
        }
    }

    fn call(&mut self, name: String, column: usize) -> Result<Node, RowkeyError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(RowkeyError::Syntax {
                column,
                expected: format!("at most {MAX_DEPTH} nested calls"),
                found: "deeper nesting".into(),
            });
        }
        let open = self.next(); // '('
        let mut args = Vec::new();
        if self.peek().kind == Kind::RParen {
            return Err(self.unexpected("an argument"));
        }
        loop {
            args.push(self.arg()?);
            match self.peek().kind {
                Kind::Comma => {
                    self.next();
                }
                Kind::RParen => break,
                _ => return Err(self.unexpected("',' or ')'")),
            }
        }
        let close = self.next(); // ')'
        self.depth -= 1;
        let what = format!("{name}{}", &self.text[open.start..close.end]);
        build_call(&name, column, args, what)
    }

    fn arg(&mut self) -> Result<Arg, RowkeyError> {
        let t = self.peek().clone();
        if let Kind::Int(value) = &t.kind {
            if matches!(self.toks.peek_ahead(1).kind, Kind::Comma | Kind::RParen) {
                self.next();
                return Ok(Arg::Int {
                    value: value.clone(),
                    column: t.column,
                });
            }
            return Err(self.unexpected("a field, a string literal or a function call"));
        }
        let nodes = self.concat()?;
        Ok(Arg::Expr {
            nodes,
            column: t.column,
        })
    }
}

fn bad(column: usize, function: &'static str, message: impl Into<String>) -> RowkeyError {
    RowkeyError::BadArgument {
        column,
        function,
        message: message.into(),
    }
}

/// A `bucket` span: `<n>s`, `<n>m`, `<n>h` or `<n>d` (n ≥ 1, at most 366 days), written to
/// the precision of the largest unit that divides it.
fn span(word: &str) -> Option<BucketUnit> {
    let unit_ms = match word.as_bytes().last()? {
        b's' => 1000,
        b'm' => 60_000,
        b'h' => 3_600_000,
        b'd' => 86_400_000,
        _ => return None,
    };
    let digits = &word[..word.len() - 1];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: i64 = digits.parse().ok()?;
    let ms = n.checked_mul(unit_ms)?;
    if n == 0 || ms > 366 * 86_400_000 {
        return None;
    }
    let digits = if ms % 86_400_000 == 0 {
        8
    } else if ms % 3_600_000 == 0 {
        10
    } else if ms % 60_000 == 0 {
        12
    } else {
        14
    };
    Some(BucketUnit::Span { ms, digits })
}

/// The integer argument `arg`, within `range`.
fn int_arg(
    function: &'static str,
    arg: &Arg,
    what: &str,
    range: std::ops::RangeInclusive<u64>,
) -> Result<u64, RowkeyError> {
    let Arg::Int { value, column } = arg else {
        return Err(bad(
            arg.column(),
            function,
            format!("{what} must be a number"),
        ));
    };
    match value.parse::<u64>() {
        Ok(v) if range.contains(&v) => Ok(v),
        _ => Err(bad(
            *column,
            function,
            format!(
                "{what} must be in {}..={}, got {value}",
                range.start(),
                range.end()
            ),
        )),
    }
}

/// The concatenation of expression arguments.
fn expr_args(function: &'static str, args: Vec<Arg>) -> Result<Vec<Node>, RowkeyError> {
    let mut nodes = Vec::new();
    for a in args {
        match a {
            Arg::Expr { nodes: n, .. } => nodes.extend(n),
            Arg::Int { column, value } => {
                return Err(bad(
                    column,
                    function,
                    format!("expected a field or expression, found the number {value} (quote it for literal digits)"),
                ))
            }
        }
    }
    Ok(nodes)
}

fn arity(
    function: &'static str,
    column: usize,
    args: &[Arg],
    range: std::ops::RangeInclusive<usize>,
    usage: &str,
) -> Result<(), RowkeyError> {
    if range.contains(&args.len()) {
        Ok(())
    } else {
        Err(bad(
            column,
            function,
            format!("takes {usage}, got {} argument(s)", args.len()),
        ))
    }
}

fn build_call(
    name: &str,
    column: usize,
    mut args: Vec<Arg>,
    what: String,
) -> Result<Node, RowkeyError> {
    let call = |func: Func, input: Vec<Node>| {
        Ok(Node::Call {
            func,
            input,
            what: what.clone(),
        })
    };
    match name {
        "salt" | "salt_letter" => {
            let (f, letters, max): (&'static str, bool, u64) = match name {
                "salt" => ("salt", false, MAX_SALT_BUCKETS),
                _ => ("salt_letter", true, super::SALT_LETTERS.len() as u64),
            };
            arity(f, column, &args, 2..=usize::MAX, "(buckets, field, ...)")?;
            let n = int_arg(f, &args[0], "the bucket count", 1..=max)?;
            let input = expr_args(f, args.split_off(1))?;
            let width = if letters {
                1
            } else {
                (n - 1).to_string().len()
            };
            call(
                Func::Salt {
                    buckets: n as u32,
                    width,
                    letters,
                },
                input,
            )
        }
        "hash_prefix" => {
            const F: &str = "hash_prefix";
            arity(F, column, &args, 2..=usize::MAX, "(hex chars, field, ...)")?;
            let k = int_arg(F, &args[0], "the number of hex characters", 1..=MD5_HEX_LEN)?;
            let input = expr_args(F, args.split_off(1))?;
            call(Func::HashPrefix { chars: k as usize }, input)
        }
        "reverse" | "reverse_domain" | "i64be" | "f64be" => {
            let (f, func): (&'static str, Func) = match name {
                "reverse" => ("reverse", Func::Reverse),
                "reverse_domain" => ("reverse_domain", Func::ReverseDomain),
                "i64be" => ("i64be", Func::I64Be),
                _ => ("f64be", Func::F64Be),
            };
            arity(f, column, &args, 1..=1, "one argument")?;
            let input = expr_args(f, args)?;
            call(func, input)
        }
        "mod" => {
            const F: &str = "mod";
            arity(F, column, &args, 2..=2, "(field, modulus)")?;
            let n = int_arg(F, &args[1], "the modulus", 1..=MAX_SALT_BUCKETS)?;
            args.truncate(1);
            let input = expr_args(F, args)?;
            let width = (n - 1).to_string().len();
            call(Func::Mod { modulus: n, width }, input)
        }
        "reverse_ts" => {
            const F: &str = "reverse_ts";
            arity(F, column, &args, 1..=3, "(field[, dec|bin][, ms|s])")?;
            let (mut fmt, mut unit) = (None, None);
            for a in &args[1..] {
                match a.word().as_deref() {
                    Some("dec") if fmt.is_none() && unit.is_none() => fmt = Some(TsFormat::Decimal),
                    Some("bin") if fmt.is_none() && unit.is_none() => fmt = Some(TsFormat::Binary),
                    Some("ms") if unit.is_none() => unit = Some(TsUnit::Millis),
                    Some("s") if unit.is_none() => unit = Some(TsUnit::Seconds),
                    _ => {
                        return Err(bad(
                            a.column(),
                            F,
                            "the format must be dec or bin, then the unit ms or s",
                        ))
                    }
                }
            }
            args.truncate(1);
            let input = expr_args(F, args)?;
            call(
                Func::ReverseTs(
                    fmt.unwrap_or(TsFormat::Decimal),
                    unit.unwrap_or(TsUnit::Millis),
                ),
                input,
            )
        }
        "bucket" => {
            const F: &str = "bucket";
            arity(
                F,
                column,
                &args,
                2..=2,
                "(field, hour|day|week|month|<n>s|<n>m|<n>h|<n>d)",
            )?;
            let unit =
                match args[1].word().as_deref() {
                    Some("hour") => BucketUnit::Hour,
                    Some("day") => BucketUnit::Day,
                    Some("week") => BucketUnit::Week,
                    Some("month") => BucketUnit::Month,
                    word => match word.and_then(span) {
                        Some(unit) => unit,
                        None => return Err(bad(
                            args[1].column(),
                            F,
                            "the unit must be hour, day, week, month or a span such as 5m, 15m, \
                             6h, 2d (n seconds, minutes, hours or days; at most 366 days)",
                        )),
                    },
                };
            args.truncate(1);
            let input = expr_args(F, args)?;
            call(Func::Bucket(unit), input)
        }
        "pad" => {
            const F: &str = "pad";
            arity(F, column, &args, 2..=2, "(field, width)")?;
            let width = int_arg(F, &args[1], "the width", 1..=MAX_ROW_LEN as u64)?;
            args.truncate(1);
            let input = expr_args(F, args)?;
            call(
                Func::Pad {
                    width: width as usize,
                },
                input,
            )
        }
        _ => Err(RowkeyError::UnknownFunction {
            column,
            name: name.to_string(),
            known: KNOWN_FUNCTIONS,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::super::RowkeySpec;
    use proptest::prelude::*;

    #[test]
    fn parse_errors_name_the_column() {
        let err = |s: &str| RowkeySpec::parse(s).unwrap_err().to_string();
        assert_eq!(err("a +"), "rowkey spec, column 4: expected a field, a string literal or a function call, found the end of the spec");
        assert_eq!(err("a b"), "rowkey spec, column 3: expected '+', found 'b'");
        assert_eq!(
            err("a)"),
            "rowkey spec, column 2: expected '+' or the end, found ')'"
        );
        assert!(err("sault(3, a)").starts_with("rowkey spec, column 1: unknown function 'sault'"));
        assert_eq!(
            err("salt(0, a)"),
            "rowkey spec, column 6: salt: the bucket count must be in 1..=1000000, got 0"
        );
        assert_eq!(
            err("salt(a)"),
            "rowkey spec, column 1: salt: takes (buckets, field, ...), got 1 argument(s)"
        );
        assert_eq!(
            err("salt(x, a)"),
            "rowkey spec, column 6: salt: the bucket count must be a number"
        );
        assert_eq!(
            err("pad(a, 99999)"),
            "rowkey spec, column 8: pad: the width must be in 1..=32767, got 99999"
        );
        assert_eq!(
            err("bucket(a, year)"),
            "rowkey spec, column 11: bucket: the unit must be hour, day, week, month or a span such as 5m, 15m, 6h, 2d (n seconds, minutes, hours or days; at most 366 days)"
        );
        assert_eq!(
            err("reverse_ts(a, hex)"),
            "rowkey spec, column 15: reverse_ts: the format must be dec or bin, then the unit ms or s"
        );
        assert_eq!(
            err("reverse()"),
            "rowkey spec, column 9: expected an argument, found ')'"
        );
        assert_eq!(
            err("reverse(a b)"),
            "rowkey spec, column 11: expected ',' or ')', found 'b'"
        );
        assert_eq!(
            err("\"abc"),
            "rowkey spec, column 1: expected a closing \", found the end of the spec"
        );
        assert_eq!(err("'\\q'"), "rowkey spec, column 2: expected an escape (\\xNN \\\\ \\\" \\' \\n \\r \\t \\0), found '\\q'");
        assert_eq!(
            err("'\\xZ1'"),
            "rowkey spec, column 2: expected two hex digits after '\\x', found '\\xZ1'"
        );
        assert_eq!(err("é"), "rowkey spec, column 1: expected a field, a string literal, a function call, '+', ',', '(' or ')', found '\\u{e9}'");
        assert_eq!(err("reverse(12)"), "rowkey spec, column 9: reverse: expected a field or expression, found the number 12 (quote it for literal digits)");
        assert!(err(&("reverse(".repeat(40) + "a" + &")".repeat(40))).contains("nested"));
        assert_eq!(
            err("salt_letter(53, a)"),
            "rowkey spec, column 13: salt_letter: the bucket count must be in 1..=52, got 53"
        );
        assert!(err("bucket(a, 0m)").contains("the unit must be"));
        assert!(err("bucket(a, 367d)").contains("the unit must be"));
        assert!(err("bucket(a, 5y)").contains("the unit must be"));
        assert!(err("reverse_ts(a, s, dec)").contains("then the unit ms or s"));
        assert_eq!(
            err("mod(a, 0)"),
            "rowkey spec, column 8: mod: the modulus must be in 1..=1000000, got 0"
        );
        assert_eq!(
            err("mod(16, a)"),
            "rowkey spec, column 9: mod: the modulus must be a number"
        );
        assert_eq!(err(""), "rowkey spec, column 1: expected a field, a string literal or a function call, found the end of the spec");
    }

    proptest! {
        /// Fuzz: the parser never panics; whatever parses, encodes any record without panicking.
        #[test]
        fn parser_never_panics(s in ".{0,60}", value in proptest::collection::vec(any::<u8>(), 0..12)) {
            if let Ok(spec) = RowkeySpec::parse(&s) {
                let names: Vec<&str> = spec.fields().iter().map(String::as_str).collect();
                let row: Vec<&[u8]> = names.iter().map(|_| value.as_slice()).collect();
                let mut e = spec.compile(&names).unwrap();
                let _ = e.encode(&row, &mut Vec::new());
            }
        }

        #[test]
        fn parser_never_panics_on_spec_like_text(parts in proptest::collection::vec(prop_oneof![
            Just("salt"), Just("pad"), Just("bucket"), Just("reverse_ts"), Just("hash_prefix"),
            Just("f64be"), Just("("), Just(")"), Just(","), Just("+"), Just("a"), Just("'x'"),
            Just("16"), Just("day"), Just("bin"), Just("`q`"), Just("\"\\x"), Just(" "),
        ], 0..24), value in proptest::collection::vec(any::<u8>(), 0..12)) {
            let s: String = parts.concat();
            if let Ok(spec) = RowkeySpec::parse(&s) {
                let names: Vec<&str> = spec.fields().iter().map(String::as_str).collect();
                let row: Vec<&[u8]> = names.iter().map(|_| value.as_slice()).collect();
                let mut e = spec.compile(&names).unwrap();
                let _ = e.encode(&row, &mut Vec::new());
            }
        }
    }
}
