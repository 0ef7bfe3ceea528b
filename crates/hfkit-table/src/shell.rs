//! The HBase shell form of a schema: one `create` statement as typed into `hbase shell`.
//! Prose: `formats/schema.md` §"HBase shell form".
//!
//! The shell is JRuby, and no Rust crate parses Ruby literals, so this is a small hand-written
//! tokenizer and recursive-descent parser for the subset `create` takes:
//!
//! ```text
//! statement := 'create' ( '(' args ')' | args ) ';'? EOF
//! args      := arg (',' arg)* ','?          consecutive `k => v` args form one hash (Ruby)
//! arg       := value | value '=>' value
//! value     := STRING | INT | true | false | nil | CONST | hash | array
//! hash      := '{' (value '=>' value (',' value '=>' value)* ','?)? '}'
//! array     := '[' (value (',' value)* ','?)? ']'
//! STRING    := '...' (\\ and \' only) | "..." (\xNN \n \t \r \s \e \0 \NNN \uXXXX \u{...} ...)
//! INT       := -?[0-9][0-9_]*               CONST := [A-Z][A-Za-z0-9_]*  (its own name; FOREVER = 2147483647)
//! comments  := '#' to end of line
//! ```
//!
//! Meaning follows `admin.rb`'s `create`: the first argument is the table name; arrays are
//! flattened and `nil`s dropped; a string is a family with defaults; a hash with `NAME` is a
//! family (its other keys are family attributes, `METADATA`/`CONFIGURATION` hashes kept as
//! strings; a family named twice is replaced, with a warning); any other hash holds table
//! options: `SPLITS` (keys in `Bytes.toBytesBinary` syntax), `SPLITS_FILE`, `NUMREGIONS` with
//! `SPLITALGO`, `METHOD => 'table_att'`, table attributes, `METADATA`, `CONFIGURATION`.
//! Where the shell prints "ignored" for an unknown key, this is an error naming it. Errors give
//! `<shell>:line:column` (column in characters) and what was expected.

use super::error::{At, Location, Owner, SchemaError};
use super::schema::{
    attr_error, explicit_keys, AttrValue, FamilySchema, ImportMapping, ParsedSchema, SchemaBuilder,
    SplitSpec, TTL_FOREVER,
};
use super::split::SplitAlgorithm;

/// Label of shell text in locations.
const SHELL_SOURCE: &str = "<shell>";
/// Deepest nesting of hashes and arrays.
const MAX_DEPTH: usize = 16;

/// Parses a `create` statement (errors located in `<shell>`).
pub fn parse_create(text: &str) -> Result<ParsedSchema, SchemaError> {
    parse_create_from(text, SHELL_SOURCE)
}

/// Parses a `create` statement read from `source` (a file name, for errors).
pub fn parse_create_from(text: &str, source: &str) -> Result<ParsedSchema, SchemaError> {
    let toks = tokenize(text, source)?;
    let mut p = Parser {
        text,
        source,
        toks,
        pos: 0,
        depth: 0,
    };
    let args = p.statement()?;
    Interpreter { text, source }.create(args)
}

// ---------------------------------------------------------------------------------------------
// Tokens

#[derive(Clone, Debug, PartialEq)]
enum Kind {
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
struct Tok {
    kind: Kind,
    /// Byte offset in the text.
    offset: usize,
}

fn describe(k: &Kind) -> String {
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

fn syntax(source: &str, text: &str, offset: usize, message: String) -> SchemaError {
    SchemaError::Syntax {
        at: At::from(Location::of_offset(source, text, offset)),
        message,
    }
}

fn tokenize(text: &str, source: &str) -> Result<Vec<Tok>, SchemaError> {
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
    toks.push(Tok {
        kind: Kind::Eof,
        offset: text.len(),
    });
    Ok(toks)
}

/// Characters that only appear in Ruby expressions (method calls, ranges, blocks, arithmetic),
/// never in the literals `create` is read as.
const RUBY_OPERATORS: &str = ".|%*+-/&!?<>^~=";

/// An example of the literal split points to write instead of an expression.
const LITERAL_SPLITS: &str = "SPLITS => ['10', '20', '30']";

/// The error for a Ruby expression, found at `offset` (the character or token `found`) after
/// the tokens `before`: the shell form is read, not run. The message quotes the expression
/// from its start and, for `SPLITS`, shows the literal form to use instead.
fn ruby_expression(
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

// ---------------------------------------------------------------------------------------------
// Values

#[derive(Clone, Debug, PartialEq)]
enum Val {
    Str(String),
    Int(i64),
    Bool(bool),
    Nil,
    /// An upper-case constant other than FOREVER: the shell's constants are their own names.
    Const(String),
    Hash(Vec<(Spanned, Spanned)>),
    Array(Vec<Spanned>),
}

#[derive(Clone, Debug, PartialEq)]
struct Spanned {
    val: Val,
    offset: usize,
}

impl Val {
    fn describe(&self) -> &'static str {
        match self {
            Val::Str(_) => "a string",
            Val::Int(_) => "an integer",
            Val::Bool(_) => "a boolean",
            Val::Nil => "nil",
            Val::Const(_) => "a constant",
            Val::Hash(_) => "a hash",
            Val::Array(_) => "an array",
        }
    }

    /// A hash key or a string-ish value: strings and constants.
    fn as_name(&self) -> Option<&str> {
        match self {
            Val::Str(s) | Val::Const(s) => Some(s),
            _ => None,
        }
    }
}

struct Parser<'a> {
    text: &'a str,
    source: &'a str,
    toks: Vec<Tok>,
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos.min(self.toks.len() - 1)]
    }

    fn peek_kind(&self, ahead: usize) -> &Kind {
        &self.toks[(self.pos + ahead).min(self.toks.len() - 1)].kind
    }

    fn next(&mut self) -> Tok {
        let t = self.peek().clone();
        if t.kind != Kind::Eof {
            self.pos += 1;
        }
        t
    }

    fn expected(&self, what: &str) -> SchemaError {
        let t = self.peek();
        syntax(
            self.source,
            self.text,
            t.offset,
            format!("expected {what}, found {}", describe(&t.kind)),
        )
    }

    fn statement(&mut self) -> Result<Vec<Spanned>, SchemaError> {
        match self.peek_kind(0) {
            Kind::Ident(s) if s == "create" => {
                self.next();
            }
            _ => return Err(self.expected("'create'")),
        }
        let paren = *self.peek_kind(0) == Kind::LParen;
        if paren {
            self.next();
        }
        let args = self.args(if paren { Kind::RParen } else { Kind::Eof })?;
        if paren {
            if *self.peek_kind(0) != Kind::RParen {
                return Err(self.expected("',' or ')'"));
            }
            self.next();
        }
        while *self.peek_kind(0) == Kind::Semicolon {
            self.next();
        }
        if *self.peek_kind(0) != Kind::Eof {
            return Err(self.expected(if paren {
                "the end of the statement"
            } else {
                "',' or the end of the statement"
            }));
        }
        Ok(args)
    }

    /// Method arguments up to `end` (not consumed); trailing `k => v` pairs become one hash.
    fn args(&mut self, end: Kind) -> Result<Vec<Spanned>, SchemaError> {
        let mut args: Vec<Spanned> = Vec::new();
        let mut implicit: Option<usize> = None;
        loop {
            let k = self.peek_kind(0).clone();
            if k == end || k == Kind::Semicolon {
                break;
            }
            let v = self.value()?;
            if *self.peek_kind(0) == Kind::Arrow {
                self.next();
                let value = self.value()?;
                match implicit {
                    Some(i) => {
                        if let Val::Hash(pairs) = &mut args[i].val {
                            pairs.push((v, value));
                        }
                    }
                    None => {
                        implicit = Some(args.len());
                        let offset = v.offset;
                        args.push(Spanned {
                            val: Val::Hash(vec![(v, value)]),
                            offset,
                        });
                    }
                }
            } else {
                implicit = None;
                args.push(v);
            }
            match self.peek_kind(0) {
                Kind::Comma => {
                    self.next();
                }
                k if *k == end || *k == Kind::Semicolon => break,
                _ => return Err(self.expected("',' or '=>'")),
            }
        }
        if args.is_empty() {
            return Err(self.expected("a table name"));
        }
        Ok(args)
    }

    fn value(&mut self) -> Result<Spanned, SchemaError> {
        let t = self.peek().clone();
        let val = match t.kind {
            Kind::Str(s) => {
                self.next();
                Val::Str(s)
            }
            Kind::Int(i) => {
                self.next();
                Val::Int(i)
            }
            Kind::Ident(name) => {
                self.next();
                match name.as_str() {
                    "true" => Val::Bool(true),
                    "false" => Val::Bool(false),
                    "nil" => Val::Nil,
                    "FOREVER" => Val::Int(TTL_FOREVER),
                    n if n.starts_with(|c: char| c.is_ascii_uppercase()) => Val::Const(name),
                    _ => {
                        return Err(syntax(
                            self.source,
                            self.text,
                            t.offset,
                            format!("expected a value, found '{name}' (quote strings: '{name}')"),
                        ))
                    }
                }
            }
            Kind::LBrace => {
                self.enter(t.offset)?;
                self.next();
                let mut pairs = Vec::new();
                while *self.peek_kind(0) != Kind::RBrace {
                    let k = self.value()?;
                    if *self.peek_kind(0) != Kind::Arrow {
                        return Err(self.expected("'=>'"));
                    }
                    self.next();
                    let v = self.value()?;
                    pairs.push((k, v));
                    match self.peek_kind(0) {
                        Kind::Comma => {
                            self.next();
                        }
                        Kind::RBrace => {}
                        _ => return Err(self.expected("',' or '}'")),
                    }
                }
                self.next();
                self.depth -= 1;
                Val::Hash(pairs)
            }
            Kind::LBracket => {
                self.enter(t.offset)?;
                self.next();
                let mut items = Vec::new();
                while *self.peek_kind(0) != Kind::RBracket {
                    items.push(self.value()?);
                    match self.peek_kind(0) {
                        Kind::Comma => {
                            self.next();
                        }
                        Kind::RBracket => {}
                        _ => return Err(self.expected("',' or ']'")),
                    }
                }
                self.next();
                self.depth -= 1;
                Val::Array(items)
            }
            Kind::LParen => {
                return Err(ruby_expression(
                    self.source,
                    self.text,
                    &self.toks[..=self.pos],
                    t.offset,
                    '(',
                ))
            }
            _ => return Err(self.expected("a value (string, number, true/false, {...} or [...])")),
        };
        Ok(Spanned {
            val,
            offset: t.offset,
        })
    }

    fn enter(&mut self, offset: usize) -> Result<(), SchemaError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(syntax(
                self.source,
                self.text,
                offset,
                format!("nesting deeper than {MAX_DEPTH}"),
            ));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Meaning (admin.rb `create`)

struct Interpreter<'a> {
    text: &'a str,
    source: &'a str,
}

impl Interpreter<'_> {
    fn at(&self, offset: usize) -> At {
        At::from(Location::of_offset(self.source, self.text, offset))
    }

    fn err(&self, offset: usize, message: impl Into<String>) -> SchemaError {
        SchemaError::Syntax {
            at: self.at(offset),
            message: message.into(),
        }
    }

    fn create(&self, args: Vec<Spanned>) -> Result<ParsedSchema, SchemaError> {
        let mut it = args.into_iter();
        let Some(first) = it.next() else {
            return Err(self.err(0, "expected a table name"));
        };
        let Val::Str(name) = &first.val else {
            return Err(self.err(
                first.offset,
                format!("table name must be a string, not {}", first.val.describe()),
            ));
        };
        let mut b = SchemaBuilder::new(name, self.at(first.offset))?;
        let mut flat = Vec::new();
        for a in it {
            flatten(a, &mut flat);
        }
        let mut splits_set = false;
        for a in flat {
            match &a.val {
                Val::Str(family) => {
                    let at = self.at(a.offset);
                    SchemaBuilder::check_family_name(family, &at)?;
                    b.add_family(FamilySchema::new(family), at, true)?;
                }
                Val::Hash(pairs) if pairs.iter().any(|(k, _)| k.val.as_name() == Some("NAME")) => {
                    self.family(&mut b, pairs, a.offset)?;
                }
                Val::Hash(pairs) => {
                    self.table_options(&mut b, pairs, &mut splits_set)?;
                }
                other => {
                    return Err(self.err(
                        a.offset,
                        format!(
                            "expected a family name or a hash, found {}",
                            other.describe()
                        ),
                    ))
                }
            }
        }
        b.finish(self.at(first.offset), ImportMapping::default())
    }

    fn scalar(&self, v: &Spanned, key: &str) -> Result<AttrValue, SchemaError> {
        match &v.val {
            Val::Str(s) | Val::Const(s) => Ok(AttrValue::Str(s.clone())),
            Val::Int(i) => Ok(AttrValue::Int(*i)),
            Val::Bool(b) => Ok(AttrValue::Bool(*b)),
            other => Err(self.err(
                v.offset,
                format!(
                    "{key} must be a string, number or boolean, not {}",
                    other.describe()
                ),
            )),
        }
    }

    /// `METADATA => {...}` / `CONFIGURATION => {...}`: values kept as strings (Ruby's `to_s`).
    fn string_map(
        &self,
        v: &Spanned,
        key: &str,
    ) -> Result<std::collections::BTreeMap<String, String>, SchemaError> {
        let Val::Hash(pairs) = &v.val else {
            return Err(self.err(v.offset, format!("{key} must be a hash")));
        };
        let mut m = std::collections::BTreeMap::new();
        for (k, val) in pairs {
            let name = k
                .val
                .as_name()
                .ok_or_else(|| self.err(k.offset, format!("{key} keys must be strings")))?;
            m.insert(name.to_string(), self.scalar(val, key)?.as_plain_string());
        }
        Ok(m)
    }

    fn key<'v>(&self, k: &'v Spanned) -> Result<&'v str, SchemaError> {
        k.val.as_name().ok_or_else(|| {
            self.err(
                k.offset,
                format!("expected an attribute name, found {}", k.val.describe()),
            )
        })
    }

    fn family(
        &self,
        b: &mut SchemaBuilder,
        pairs: &[(Spanned, Spanned)],
        offset: usize,
    ) -> Result<(), SchemaError> {
        let Some((_, name_v)) = pairs.iter().find(|(k, _)| k.val.as_name() == Some("NAME")) else {
            return Err(self.err(offset, "column family must have a NAME"));
        };
        let Val::Str(name) = &name_v.val else {
            return Err(self.err(
                name_v.offset,
                format!("NAME must be a string, not {}", name_v.val.describe()),
            ));
        };
        let at = self.at(name_v.offset);
        SchemaBuilder::check_family_name(name, &at)?;
        // Like the shell, a family named again starts from its earlier definition.
        let mut f = b
            .family_mut(name)
            .cloned()
            .unwrap_or_else(|| FamilySchema::new(name));
        for (k, v) in pairs {
            let key = self.key(k)?;
            match key {
                "NAME" => {}
                "METADATA" => f.metadata.extend(self.string_map(v, "METADATA")?),
                "CONFIGURATION" => f.configuration.extend(self.string_map(v, "CONFIGURATION")?),
                _ => {
                    let value = self.scalar(v, key)?;
                    f.set_attribute(key, &value)
                        .map_err(|e| attr_error(e, self.at(k.offset), Some(name), key, &value))?;
                }
            }
        }
        b.add_family(f, at, true)
    }

    fn table_options(
        &self,
        b: &mut SchemaBuilder,
        pairs: &[(Spanned, Spanned)],
        splits_set: &mut bool,
    ) -> Result<(), SchemaError> {
        let find = |name: &str| pairs.iter().find(|(k, _)| k.val.as_name() == Some(name));
        let splits = find("SPLITS");
        let splits_file = find("SPLITS_FILE");
        let numregions = find("NUMREGIONS");
        let splitalgo = find("SPLITALGO");
        let mut spec = None;
        let first_split_key = [splits, splits_file, numregions, splitalgo]
            .into_iter()
            .flatten()
            .next();
        if let Some((k, _)) = first_split_key {
            if *splits_set {
                return Err(SchemaError::Splits {
                    at: self.at(k.offset),
                    reason: "splits are given more than once".into(),
                });
            }
            *splits_set = true;
        }
        let kinds = u8::from(splits.is_some())
            + u8::from(splits_file.is_some())
            + u8::from(numregions.is_some() || splitalgo.is_some());
        if let (true, Some((k, _))) = (kinds > 1, first_split_key) {
            return Err(SchemaError::Splits {
                at: self.at(k.offset),
                reason: "use only one of SPLITS, SPLITS_FILE or NUMREGIONS + SPLITALGO".into(),
            });
        }
        if let Some((_, v)) = splits {
            let Val::Array(items) = &v.val else {
                return Err(self.err(v.offset, "SPLITS must be an array of strings"));
            };
            let mut keys = Vec::new();
            for item in items {
                let Val::Str(s) = &item.val else {
                    return Err(self.err(
                        item.offset,
                        format!("a split key must be a string, not {}", item.val.describe()),
                    ));
                };
                keys.push((s.clone(), self.at(item.offset)));
            }
            spec = Some(explicit_keys(keys)?);
        }
        if let Some((_, v)) = splits_file {
            let Val::Str(path) = &v.val else {
                return Err(self.err(v.offset, "SPLITS_FILE must be a string"));
            };
            spec = Some(SplitSpec::File(path.into()));
        }
        if let Some((k, _)) = numregions.or(splitalgo) {
            let Some((_, n)) = numregions else {
                return Err(SchemaError::Splits {
                    at: self.at(k.offset),
                    reason: "number of regions must be specified (NUMREGIONS)".into(),
                });
            };
            let Some((_, algo)) = splitalgo else {
                return Err(SchemaError::Splits {
                    at: self.at(k.offset),
                    reason: "split algorithm must be specified (SPLITALGO)".into(),
                });
            };
            let Val::Int(n_regions) = n.val else {
                return Err(self.err(
                    n.offset,
                    format!("NUMREGIONS must be an integer, not {}", n.val.describe()),
                ));
            };
            if n_regions <= 1 {
                return Err(SchemaError::Splits {
                    at: self.at(n.offset),
                    reason: format!("number of regions must be greater than 1, got {n_regions}"),
                });
            }
            let name = algo
                .val
                .as_name()
                .ok_or_else(|| self.err(algo.offset, "SPLITALGO must be a string"))?;
            let a = SplitAlgorithm::from_name(name).ok_or_else(|| {
                SchemaError::UnknownSplitAlgorithm {
                    at: self.at(algo.offset),
                    name: name.to_string(),
                }
            })?;
            let regions = usize::try_from(n_regions).unwrap_or(usize::MAX);
            let s = SplitSpec::Algorithm {
                algo: a,
                regions,
                first_row: None,
                last_row: None,
            };
            s.regions(None).map_err(|e| SchemaError::Splits {
                at: self.at(n.offset),
                reason: e.to_string(),
            })?;
            spec = Some(s);
        }
        if let Some(s) = spec {
            b.splits = s;
        }
        for (k, v) in pairs {
            let key = self.key(k)?;
            match key {
                "SPLITS" | "SPLITS_FILE" | "NUMREGIONS" | "SPLITALGO" => {}
                "METHOD" => {
                    if v.val.as_name() != Some("table_att") {
                        return Err(
                            self.err(v.offset, "table_att is currently the only supported METHOD")
                        );
                    }
                }
                "METADATA" => b.metadata.extend(self.string_map(v, "METADATA")?),
                "CONFIGURATION" => b.configuration.extend(self.string_map(v, "CONFIGURATION")?),
                _ => {
                    let value = self.scalar(v, key)?;
                    b.set_table_attribute(key, &value).map_err(|e| match e {
                        super::schema::AttrError::Unknown => SchemaError::UnknownAttribute {
                            at: self.at(k.offset),
                            owner: Owner(None),
                            attribute: key.to_string(),
                        },
                        other => attr_error(other, self.at(k.offset), None, key, &value),
                    })?;
                }
            }
        }
        Ok(())
    }
}

/// `args.flatten.compact`.
fn flatten(v: Spanned, out: &mut Vec<Spanned>) {
    match v.val {
        Val::Array(items) => items.into_iter().for_each(|i| flatten(i, out)),
        Val::Nil => {}
        _ => out.push(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{BloomFilterKind, KeepDeletedCells};
    use hfkit_format::compression::Compression;
    use proptest::prelude::*;

    fn ok(s: &str) -> ParsedSchema {
        parse_create(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn err(s: &str) -> String {
        parse_create(s).unwrap_err().to_string()
    }

    #[test]
    fn the_usual_create() {
        let p = ok("create 'ns:t', {NAME => 'd', VERSIONS => 1, COMPRESSION => 'SNAPPY', BLOOMFILTER => 'ROW', TTL => 604800}, {NAME => 'i'}, SPLITS => ['a', 'b']");
        let t = &p.table;
        assert_eq!(t.full_name(), "ns:t");
        assert_eq!(t.families.len(), 2);
        let d = t.family("d").unwrap();
        assert_eq!(d.versions, 1);
        assert_eq!(d.compression, Compression::Snappy);
        assert_eq!(d.bloom, BloomFilterKind::Row);
        assert_eq!(d.ttl_seconds, Some(604800));
        assert_eq!(t.family("i").unwrap(), &FamilySchema::new("i"));
        assert_eq!(
            t.splits,
            SplitSpec::Explicit(vec![b"a".to_vec(), b"b".to_vec()])
        );
        assert!(p.warnings.is_empty());
        assert_eq!(p.mapping, ImportMapping::default());
    }

    #[test]
    fn forms() {
        let p = ok("create 't', 'f1', 'f2'");
        assert_eq!(p.table.full_name(), "t");
        assert_eq!(p.table.namespace, "default");
        assert_eq!(
            p.table
                .families
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>(),
            ["f1", "f2"]
        );
        assert_eq!(p.table.splits, SplitSpec::None);

        let p = ok("create 't', {NAME => 'f'}, {NUMREGIONS => 16, SPLITALGO => 'HexStringSplit'}");
        assert_eq!(
            p.table.splits,
            SplitSpec::Algorithm {
                algo: SplitAlgorithm::HexString,
                regions: 16,
                first_row: None,
                last_row: None
            }
        );
        let p = ok("create 't', 'f', {NUMREGIONS => 4, SPLITALGO => 'org.apache.hadoop.hbase.util.RegionSplitter$UniformSplit'}");
        assert_eq!(p.table.splits.regions(None).unwrap().len(), 4);
        let p = ok("create 't', 'f', SPLITS_FILE => 'splits.txt'");
        assert_eq!(p.table.splits, SplitSpec::File("splits.txt".into()));

        // Parentheses, double quotes, arrays, trailing commas, comments, semicolon, nil.
        let p = ok("create(\"t\", ['a', {NAME => \"b\",},], nil, # comment\n  SPLITS => [\"\\x00\\x01\", 'k\\x02',],);");
        assert_eq!(p.table.families.len(), 2);
        assert_eq!(
            p.table.splits,
            SplitSpec::Explicit(vec![vec![0, 1], b"k\x02".to_vec()])
        );

        // FOREVER as a constant and as a string; durations; booleans; integers as strings.
        let p = ok("create 't', {NAME => 'a', TTL => FOREVER}, {NAME => 'b', TTL => 'FOREVER'}, {NAME => 'c', TTL => '1 DAY 2 HOURS', IN_MEMORY => 'true', VERSIONS => '5', BLOCKSIZE => '128KB', KEEP_DELETED_CELLS => true}");
        assert_eq!(p.table.family("a").unwrap().ttl_seconds, None);
        assert_eq!(p.table.family("b").unwrap().ttl_seconds, None);
        let c = p.table.family("c").unwrap();
        assert_eq!(c.ttl_seconds, Some(93600));
        assert!(c.in_memory);
        assert_eq!(c.versions, 5);
        assert_eq!(c.block_size, 131072);
        assert_eq!(c.keep_deleted_cells, KeepDeletedCells::True);

        // Metadata and configuration, at both levels; table attributes; METHOD.
        let p = ok("create 't', {NAME => 'f', BLOOMFILTER => 'ROWPREFIX_FIXED_LENGTH', CONFIGURATION => {'RowPrefixBloomFilter.prefix_length' => 6}, METADATA => {'k' => 1}}, {METHOD => 'table_att', MAX_FILESIZE => 1073741824, DURABILITY => 'SYNC_WAL', METADATA => {'owner' => 'x'}, CONFIGURATION => {'hbase.hstore.blockingStoreFiles' => '20'}}");
        let f = p.table.family("f").unwrap();
        assert_eq!(f.bloom, BloomFilterKind::RowPrefixFixedLength(6));
        assert_eq!(f.metadata["k"], "1");
        assert_eq!(p.table.attributes["MAX_FILESIZE"], "1073741824");
        assert_eq!(p.table.attributes["DURABILITY"], "SYNC_WAL");
        assert_eq!(p.table.metadata["owner"], "x");
        assert_eq!(
            p.table.configuration["hbase.hstore.blockingStoreFiles"],
            "20"
        );
    }

    #[test]
    fn family_named_twice_is_replaced_with_a_warning() {
        let p = ok("create 't', {NAME => 'f', VERSIONS => 3}, {NAME => 'f', TTL => 60}");
        let f = p.table.family("f").unwrap();
        // A hash for an existing family starts from the earlier definition, as in the shell.
        assert_eq!((f.versions, f.ttl_seconds), (3, Some(60)));
        assert_eq!(p.warnings.len(), 1);
        assert!(
            p.warnings[0].contains("family 'f' already exists"),
            "{:?}",
            p.warnings
        );
        let p = ok("create 't', {NAME => 'f', VERSIONS => 3}, 'f'");
        assert_eq!(p.table.family("f").unwrap().versions, 1);
        let p = ok("create 't', 'a', 'b', 'c', 'd'");
        assert!(p.warnings[0].contains("4 column families"));
    }

    #[test]
    fn errors_name_the_column() {
        assert_eq!(
            err("create 't', {NAME => 'f', VERSION => 3}"),
            "<shell>:1:27: family 'f': unknown attribute 'VERSION'"
        );
        assert_eq!(
            err("create 't', {NAME => 'f', VERSIONS => 0}"),
            "<shell>:1:27: family 'f': attribute VERSIONS = 0: must be between 1 and 2147483647"
        );
        assert_eq!(
            err("create 't', {NAME => 'f', VERSIONS => 1, MIN_VERSIONS => 2}"),
            "<shell>:1:22: family 'f': attribute MIN_VERSIONS = 2: must not exceed VERSIONS (1)"
        );
        assert_eq!(err("create 't', 'f', SPLITS => ['a', 'a']"), "<shell>:1:34: split key 'a': all split keys must be unique; this one appears more than once");
        assert_eq!(
            err("create 't', 'f', SPLITS => ['']"),
            "<shell>:1:29: split key '': an empty split key must not be passed in the split keys"
        );
        assert_eq!(
            err("create 't', 'f', COLOR => 'red'"),
            "<shell>:1:18: table: unknown attribute 'COLOR'"
        );
        assert_eq!(
            err("create 't'"),
            "<shell>:1:8: table 't' has no column family"
        );
        assert_eq!(
            err("create 't', {VERSIONS => 1}"),
            "<shell>:1:14: table: unknown attribute 'VERSIONS'"
        );
        assert_eq!(
            err("create 't', 'f', {NUMREGIONS => 1, SPLITALGO => 'HexStringSplit'}"),
            "<shell>:1:33: splits: number of regions must be greater than 1, got 1"
        );
        assert_eq!(
            err("create 't', 'f', {NUMREGIONS => 4}"),
            "<shell>:1:19: splits: split algorithm must be specified (SPLITALGO)"
        );
        assert_eq!(err("create 't', 'f', {NUMREGIONS => 4, SPLITALGO => 'Foo'}"), "<shell>:1:49: unknown split algorithm 'Foo' (expected HexStringSplit, DecimalStringSplit or UniformSplit)");
        assert_eq!(
            err("create 't', 'f', {SPLITS => ['a'], NUMREGIONS => 3, SPLITALGO => 'UniformSplit'}"),
            "<shell>:1:19: splits: use only one of SPLITS, SPLITS_FILE or NUMREGIONS + SPLITALGO"
        );
        assert_eq!(
            err("create 't', 'f', SPLITS => ['a'], SPLITS_FILE => 'x'"),
            "<shell>:1:18: splits: use only one of SPLITS, SPLITS_FILE or NUMREGIONS + SPLITALGO"
        );
        assert_eq!(
            err("create 't', 'f', {SPLITS => ['a']}, {SPLITS => ['b']}"),
            "<shell>:1:38: splits: splits are given more than once"
        );
        assert_eq!(err("create 'a b', 'f'"), "<shell>:1:8: table name 'a b': illegal character ' ' at 1 of qualifier 'a b': table qualifiers may only contain letters, digits, '_', '-' and '.'");
        assert_eq!(err("create 't', 'a:b'"), "<shell>:1:13: family name 'a:b': illegal character 0x3A: column family names cannot contain control characters, ':', '\\' or '/'");
        assert_eq!(err("create 't', {NAME => 'f', COMPRESSION => 'LZMA'}"), "<shell>:1:27: family 'f': attribute COMPRESSION = 'LZMA': HBase knows LZMA, but hfkit cannot write it (supported: NONE, GZ, SNAPPY, LZ4, ZSTD)");
        assert_eq!(
            err("create 't', {NAME => 'f', TTL => 'FOREVER' 'x'}"),
            "<shell>:1:44: expected ',' or '}', found the string 'x'"
        );
        assert_eq!(
            err("create 't' 'f'"),
            "<shell>:1:12: expected ',' or '=>', found the string 'f'"
        );
        assert_eq!(
            err("create 't', {NAME => 'f'"),
            "<shell>:1:25: expected ',' or '}', found the end of the statement"
        );
        assert_eq!(
            err("create 't', 'f"),
            "<shell>:1:13: expected a closing ' for this string"
        );
        assert_eq!(
            err("create 't', 1.5"),
            "<shell>:1:13: expected an integer, found a floating-point number"
        );
        assert_eq!(
            err("create 't', 3"),
            "<shell>:1:13: expected a family name or a hash, found an integer"
        );
        assert_eq!(
            err("create 't', f"),
            "<shell>:1:13: expected a value, found 'f' (quote strings: 'f')"
        );
        assert_eq!(
            err("alter 't', 'f'"),
            "<shell>:1:1: expected 'create', found 'alter'"
        );
        assert_eq!(
            err("create 't', \"#{x}\""),
            "<shell>:1:14: string interpolation #{...} is not supported"
        );
        assert!(
            err("create 't', 'f', SPLITS => [\"\\xff\"]").contains("use a single-quoted '\\xFF'")
        );
        assert!(err("create 't', 'f', SPLITS => ['\\xff']").contains("upper-case"));
        assert_eq!(err("create 't',\n  {NAME => 'f', TTL => 'soon'}"), "<shell>:2:17: family 'f': attribute TTL = 'soon': 'soon' is not FOREVER, a number of seconds or e.g. '7 DAYS 12 HOURS'");
        assert_eq!(
            err("create 't', {NAME => 'f', METHOD => 'x'}"),
            "<shell>:1:27: family 'f': unknown attribute 'METHOD'"
        );
        assert_eq!(
            err("create 't', 'f', METHOD => 'alter'"),
            "<shell>:1:28: table_att is currently the only supported METHOD"
        );
        assert!(err(&format!(
            "create 't', {}'f'{}",
            "[".repeat(20),
            "]".repeat(20)
        ))
        .contains("nesting"));
    }

    #[test]
    fn ruby_expressions_are_named_with_the_literal_form_to_use() {
        let splits = "Ruby expressions are not evaluated (the shell form is read, not run); \
             write the split points as a literal array, e.g. SPLITS => ['10', '20', '30'], or \
             compute them with `hfkit plan --regions N`, or use NUMREGIONS => N with SPLITALGO, \
             or a TOML schema's [splits] section";
        // The seed articles' idiom: a range mapped through a block.
        assert_eq!(
            err("create 'ns:t', 'f', SPLITS => (0..99).map{|i| '%02d' % i}"),
            format!("<shell>:1:33: found '.' in `(0..99).map{{|i| '%02d' % i}}`: {splits}")
        );
        assert_eq!(
            err("create 't', 'f', {SPLITS => (1..9).map { |i| \"#{i}\" }}"),
            format!("<shell>:1:31: found '.' in `(1..9).map {{ |i| \"#{{i}}\" }}}}`: {splits}")
        );
        assert_eq!(
            err("create('t', 'f', SPLITS => ['a', 'b'].map(&:upcase))"),
            format!("<shell>:1:38: found '.' in `['a', 'b'].map(&:upcase))`: {splits}")
        );
        assert_eq!(
            err("create 't', 'f', SPLITS => ('a')"),
            format!("<shell>:1:28: found '(' in `('a')`: {splits}")
        );
        // Other values: arithmetic, a block's bar, with the key named.
        assert_eq!(
            err("create 't', {NAME => 'f', TTL => 7 * 86400}"),
            "<shell>:1:36: found '*' in `7 * 86400}`: Ruby expressions are not evaluated (the \
             shell form is read, not run); write the value of TTL as a literal (a string, an \
             integer, true/false, [...] or {...})"
        );
        assert_eq!(
            err("create 't', 'f', SPLITS => [*'a'..'c']"),
            format!("<shell>:1:29: found '*' in `*'a'..'c']`: {splits}")
        );
    }

    #[test]
    fn string_escapes() {
        let p = ok(
            r#"create 't', 'f', SPLITS => ["a\tb", "\101\x7", "\u0041\u{42}", "q\"\\\s", 'x\'y\\z\n']"#,
        );
        let SplitSpec::Explicit(keys) = p.table.splits else {
            panic!()
        };
        assert_eq!(
            keys,
            [
                b"a\tb".to_vec(),
                b"A\x07".to_vec(),
                b"AB".to_vec(),
                b"q\"\\ ".to_vec(),
                b"x'y\\z\\n".to_vec()
            ]
        );
    }

    proptest! {
        /// Fuzz: the shell parser never panics.
        #[test]
        fn never_panics(s in ".{0,80}") {
            let _ = parse_create(&s);
            let _ = parse_create(&format!("create {s}"));
        }

        #[test]
        fn never_panics_on_shell_like_text(parts in proptest::collection::vec(prop_oneof![
            Just("create"), Just(" 't'"), Just(","), Just("{"), Just("}"), Just("["), Just("]"),
            Just("=>"), Just("NAME"), Just("'f'"), Just("VERSIONS"), Just("3"), Just("-1"),
            Just("SPLITS"), Just("NUMREGIONS"), Just("SPLITALGO"), Just("'HexStringSplit'"),
            Just("\"\\x0"), Just("TTL"), Just("FOREVER"), Just("nil"), Just("("), Just(")"),
            Just("METADATA"), Just("CONFIGURATION"), Just("'\\xZZ'"), Just("#"), Just("\n"),
        ], 0..30)) {
            let _ = parse_create(&parts.concat());
        }
    }
}
