//! Recovery from unclosed lists, in linear time.
//!
//! When a top-level form runs to the end of input, docs/reader.md cuts it before the first line
//! that starts with `(` in column 0 inside it (Emacs' `beginning-of-defun` heuristic) and
//! scans on from there. Re-scanning after every cut would be quadratic on a file of many
//! unclosed forms, so the scanner instead matches every parenthesis from the first unclosed
//! form to the end once, here, and from then on closes lists by lookup. Matching is local
//! (the `)` matching an `(` depends only on the text after it), so a lookup gives exactly
//! what a fresh scan from any later point would find. A fresh reading after a runaway
//! string or comment (docs/reader.md#runaway-strings-and-comments) reads the rest in
//! another way, so it drops the table; the next unclosed form builds one from itself.

use super::lexer::{next_paren, Paren, Unterminated};

/// Every syntactic `(` from `from` to the end of input, with its matching `)`.
pub(crate) struct MatchTable {
    /// `(open, close)` sorted by `open`; `close` is `NONE` for an unclosed list.
    pairs: Vec<(usize, usize)>,
    /// Positions of the `(` that begin a line, sorted.
    column_zero: Vec<usize>,
    /// A string, comment or escape that ran to the end of input, if any.
    pub(crate) unterminated: Option<Unterminated>,
}

const NONE: usize = usize::MAX;

impl MatchTable {
    pub(crate) fn build(b: &[u8], from: usize) -> MatchTable {
        let mut pairs = Vec::new();
        let mut column_zero = Vec::new();
        let mut open_stack: Vec<usize> = Vec::new(); // indices into `pairs`
        let mut i = from;
        let unterminated = loop {
            let (paren, next) = next_paren(b, i);
            i = next;
            match paren {
                Paren::Open(at) => {
                    if at == 0 || b[at - 1] == b'\n' {
                        column_zero.push(at);
                    }
                    open_stack.push(pairs.len());
                    pairs.push((at, NONE));
                }
                Paren::Close(at) => {
                    // A `)` with nothing open is stray; the top-level loop reports it.
                    if let Some(k) = open_stack.pop() {
                        pairs[k].1 = at;
                    }
                }
                Paren::End(unterminated) => break unterminated,
            }
        };
        MatchTable {
            pairs,
            column_zero,
            unterminated,
        }
    }

    /// The position of the `)` matching the `(` at `open`, or `None` if it is unclosed.
    pub(crate) fn close_of(&self, open: usize) -> Option<usize> {
        let k = self.pairs.binary_search_by_key(&open, |p| p.0).ok()?;
        let close = self.pairs[k].1;
        (close != NONE).then_some(close)
    }

    /// The first `(` in column 0 strictly after `pos`: where an unclosed form is cut.
    pub(crate) fn column_zero_after(&self, pos: usize) -> Option<usize> {
        let k = self.column_zero.partition_point(|&p| p <= pos);
        self.column_zero.get(k).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_and_cuts() {
        let src = b"(a (b)\n(c)\n(d";
        let t = MatchTable::build(src, 0);
        assert_eq!(t.close_of(0), None);
        assert_eq!(t.close_of(3), Some(5));
        assert_eq!(t.close_of(7), Some(9));
        assert_eq!(t.close_of(11), None);
        assert_eq!(t.column_zero_after(0), Some(7));
        assert_eq!(t.column_zero_after(7), Some(11));
        assert_eq!(t.column_zero_after(11), None);
    }
}
