//! The token cursor of hfkit's hand-written recursive-descent parsers: a position in a list of
//! tokens with `peek`, `next`, `expect` and `eat`, that never moves past the end token and never
//! panics, whatever the input.
//!
//! Shared by the parsers of the two small languages hfkit reads: the HBase shell `create`
//! statement ([`crate::shell`], `formats/schema.md` §"HBase shell form") and the rowkey
//! expression language of `hfkit-pipeline` (`formats/rowkey.md`), which can use it from there
//! because `hfkit-table` is one of its dependencies. It lives here, the lowest layer with a
//! parser, so that both use one copy. The cursor knows nothing of a token's kind: each parser
//! keeps its own token type and builds its own errors from the token it is shown.

/// A position in `toks`; past the last token every read sees `end` (the tokenizer's end of
/// input), so a parser that reads on after the end keeps seeing it instead of panicking.
#[derive(Clone, Debug)]
pub struct TokenCursor<T> {
    toks: Vec<T>,
    end: T,
    pos: usize,
}

impl<T> TokenCursor<T> {
    /// A cursor at the first of `toks`, followed by `end`.
    pub fn new(toks: Vec<T>, end: T) -> Self {
        TokenCursor { toks, end, pos: 0 }
    }

    /// The current token (`end` once every token is consumed).
    pub fn peek(&self) -> &T {
        self.peek_ahead(0)
    }

    /// The token `ahead` places after the current one (`end` past the last).
    pub fn peek_ahead(&self, ahead: usize) -> &T {
        self.pos
            .checked_add(ahead)
            .and_then(|i| self.toks.get(i))
            .unwrap_or(&self.end)
    }

    /// The index of the current token (the number consumed).
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Whether every token is consumed (the current token is `end`).
    pub fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    /// The tokens consumed so far and the current one (without `end`): what an error about
    /// the current token can quote as its context.
    pub fn through_current(&self) -> &[T] {
        &self.toks[..self.toks.len().min(self.pos + 1)]
    }
}

impl<T: Clone> TokenCursor<T> {
    /// The current token, moving past it (at the end: `end`, staying there). Not an
    /// `Iterator`: it never runs out.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> T {
        let t = self.peek().clone();
        if !self.at_end() {
            self.pos += 1;
        }
        t
    }

    /// The current token if `is` holds for it, moving past it; otherwise the error `err`
    /// makes of it, staying.
    pub fn expect<E>(
        &mut self,
        is: impl FnOnce(&T) -> bool,
        err: impl FnOnce(&T) -> E,
    ) -> Result<T, E> {
        if is(self.peek()) {
            Ok(self.next())
        } else {
            Err(err(self.peek()))
        }
    }

    /// Moves past the current token if `is` holds for it; says whether it did.
    pub fn eat(&mut self, is: impl FnOnce(&T) -> bool) -> bool {
        let hit = is(self.peek());
        if hit && !self.at_end() {
            self.pos += 1;
        }
        hit
    }
}

#[cfg(test)]
mod tests {
    use super::TokenCursor;

    #[test]
    fn reads_in_order_and_stays_at_the_end() {
        let mut c = TokenCursor::new(vec!['a', 'b'], '$');
        assert_eq!(
            (*c.peek(), *c.peek_ahead(1), *c.peek_ahead(2)),
            ('a', 'b', '$')
        );
        assert_eq!(c.next(), 'a');
        assert_eq!(c.position(), 1);
        assert_eq!(c.through_current(), &['a', 'b']);
        assert_eq!(c.next(), 'b');
        assert!(c.at_end());
        assert_eq!((c.next(), c.next(), c.position()), ('$', '$', 2));
        assert_eq!(c.through_current(), &['a', 'b']);
        assert_eq!(*c.peek_ahead(usize::MAX), '$');
    }

    #[test]
    fn an_empty_list_is_only_its_end() {
        let mut c = TokenCursor::new(Vec::new(), 0u8);
        assert!(c.at_end());
        assert_eq!((c.next(), c.position()), (0, 0));
        assert!(c.through_current().is_empty());
    }

    #[test]
    fn expect_and_eat_move_only_on_a_match() {
        let mut c = TokenCursor::new(vec![1, 2], 0);
        assert_eq!(
            c.expect(|&t| t == 2, |&t| format!("found {t}")),
            Err("found 1".into())
        );
        assert_eq!(c.position(), 0);
        assert_eq!(c.expect(|&t| t == 1, |&t| format!("found {t}")), Ok(1));
        assert!(!c.eat(|&t| t == 1));
        assert!(c.eat(|&t| t == 2));
        assert!(c.eat(|&t| t == 0));
        assert_eq!(c.position(), 2);
    }
}
