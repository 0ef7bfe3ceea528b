//! The grammar of the shell form (`formats/schema.md` §"HBase shell form"): a `create`
//! statement's arguments as located values ([`Spanned`]), with Ruby's implicit hash of
//! trailing `k => v` arguments; nesting is bounded. Reads the tokens through the shared
//! [`TokenCursor`].

use super::lex::{describe, ruby_expression, syntax, Kind, Tok};
use crate::cursor::TokenCursor;
use crate::error::SchemaError;
use crate::schema::TTL_FOREVER;

/// Deepest nesting of hashes and arrays.
const MAX_DEPTH: usize = 16;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Val {
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
pub(super) struct Spanned {
    pub(super) val: Val,
    pub(super) offset: usize,
}

impl Val {
    pub(super) fn describe(&self) -> &'static str {
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
    pub(super) fn as_name(&self) -> Option<&str> {
        match self {
            Val::Str(s) | Val::Const(s) => Some(s),
            _ => None,
        }
    }
}

pub(super) struct Parser<'a> {
    text: &'a str,
    source: &'a str,
    toks: TokenCursor<Tok>,
    depth: usize,
}

/// The error for finding `t` where `what` was expected.
fn unexpected(source: &str, text: &str, t: &Tok, what: &str) -> SchemaError {
    syntax(
        source,
        text,
        t.offset,
        format!("expected {what}, found {}", describe(&t.kind)),
    )
}

impl<'a> Parser<'a> {
    pub(super) fn new(text: &'a str, source: &'a str, toks: TokenCursor<Tok>) -> Self {
        Parser {
            text,
            source,
            toks,
            depth: 0,
        }
    }

    fn peek(&self) -> &Tok {
        self.toks.peek()
    }

    fn peek_kind(&self, ahead: usize) -> &Kind {
        &self.toks.peek_ahead(ahead).kind
    }

    fn next(&mut self) -> Tok {
        self.toks.next()
    }

    fn expected(&self, what: &str) -> SchemaError {
        unexpected(self.source, self.text, self.peek(), what)
    }

    /// The current token if it is `kind`, else the error that `what` was expected.
    fn expect(&mut self, kind: Kind, what: &str) -> Result<Tok, SchemaError> {
        let (source, text) = (self.source, self.text);
        self.toks
            .expect(|t| t.kind == kind, |t| unexpected(source, text, t, what))
    }

    pub(super) fn statement(&mut self) -> Result<Vec<Spanned>, SchemaError> {
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
            self.expect(Kind::RParen, "',' or ')'")?;
        }
        while self.toks.eat(|t| t.kind == Kind::Semicolon) {}
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
                    self.expect(Kind::Arrow, "'=>'")?;
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
                    self.toks.through_current(),
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
