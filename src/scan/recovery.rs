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
///
/// Positions are kept as `u32` when the input is under 4 GiB (always, under any sane
/// size cap), halving the table: a file of nothing but unclosed `(` lines needs one entry
/// per two bytes, 8 bytes each and nothing else, so this is what bounds the scanner's
/// memory on such input.
pub(crate) enum MatchTable {
    Narrow(Table<u32>),
    Wide(Table<usize>),
}

impl MatchTable {
    pub(crate) fn build(b: &[u8], from: usize) -> MatchTable {
        if u32::try_from(b.len()).is_ok_and(|n| n < u32::MAX) {
            MatchTable::Narrow(Table::build(b, from))
        } else {
            MatchTable::Wide(Table::build(b, from))
        }
    }

    /// The position of the `)` matching the `(` at `open`, or `None` if it is unclosed.
    pub(crate) fn close_of(&self, open: usize) -> Option<usize> {
        match self {
            MatchTable::Narrow(t) => t.close_of(open),
            MatchTable::Wide(t) => t.close_of(open),
        }
    }

    /// The first syntactic `(` in column 0 strictly after `pos`: where an unclosed form
    /// is cut. Looks at the `(` after `pos` up to that one, which lie in the form being
    /// cut: over a file, each `(` is looked at once.
    pub(crate) fn column_zero_after(&self, b: &[u8], pos: usize) -> Option<usize> {
        match self {
            MatchTable::Narrow(t) => t.column_zero_after(b, pos),
            MatchTable::Wide(t) => t.column_zero_after(b, pos),
        }
    }

    /// A string, comment or escape that ran to the end of input, if any.
    pub(crate) fn unterminated(&self) -> Option<Unterminated> {
        match self {
            MatchTable::Narrow(t) => t.unterminated,
            MatchTable::Wide(t) => t.unterminated,
        }
    }
}

/// A byte position as the table stores it.
pub(crate) trait Position: Copy + Ord {
    const NONE: Self;
    fn from_usize(p: usize) -> Self;
    fn to_usize(self) -> usize;
}

impl Position for u32 {
    const NONE: u32 = u32::MAX;
    fn from_usize(p: usize) -> u32 {
        p as u32 // The input is shorter than u32::MAX (MatchTable::build).
    }
    fn to_usize(self) -> usize {
        self as usize
    }
}

impl Position for usize {
    const NONE: usize = usize::MAX;
    fn from_usize(p: usize) -> usize {
        p
    }
    fn to_usize(self) -> usize {
        self
    }
}

pub(crate) struct Table<P> {
    /// `(open, close)` sorted by `open`; `close` is `NONE` for an unclosed list.
    pairs: Vec<(P, P)>,
    unterminated: Option<Unterminated>,
}

impl<P: Position> Table<P> {
    fn build(b: &[u8], from: usize) -> Table<P> {
        // Reserved once, to the count of `(` bytes (an upper bound), so that the vector
        // never holds twice its size while growing.
        let rest = &b[from.min(b.len())..];
        let mut pairs: Vec<(P, P)> = Vec::with_capacity(memchr::memchr_iter(b'(', rest).count());
        // The lists still open form a stack threaded through their own `close` slots
        // (each holds the index of the list open below it), so it costs no memory.
        let mut top = P::NONE;
        let mut i = from;
        let unterminated = loop {
            let (paren, next) = next_paren(b, i);
            i = next;
            match paren {
                Paren::Open(at) => {
                    pairs.push((P::from_usize(at), top));
                    top = P::from_usize(pairs.len() - 1);
                }
                Paren::Close(at) => {
                    // A `)` with nothing open is stray; the top-level loop reports it.
                    if top != P::NONE {
                        let k = top.to_usize();
                        top = pairs[k].1;
                        pairs[k].1 = P::from_usize(at);
                    }
                }
                Paren::End(unterminated) => break unterminated,
            }
        };
        while top != P::NONE {
            let k = top.to_usize();
            top = pairs[k].1;
            pairs[k].1 = P::NONE;
        }
        Table {
            pairs,
            unterminated,
        }
    }

    fn close_of(&self, open: usize) -> Option<usize> {
        let k = self
            .pairs
            .binary_search_by_key(&open, |p| p.0.to_usize())
            .ok()?;
        let close = self.pairs[k].1;
        (close != P::NONE).then(|| close.to_usize())
    }

    fn column_zero_after(&self, b: &[u8], pos: usize) -> Option<usize> {
        let k = self.pairs.partition_point(|p| p.0.to_usize() <= pos);
        self.pairs[k..]
            .iter()
            .map(|p| p.0.to_usize())
            .find(|&at| at == 0 || b[at - 1] == b'\n')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_and_cuts() {
        let src = b"(a (b)\n(c)\n(d";
        let t = MatchTable::build(src, 0);
        assert!(matches!(t, MatchTable::Narrow(_)));
        assert_eq!(t.close_of(0), None);
        assert_eq!(t.close_of(3), Some(5));
        assert_eq!(t.close_of(7), Some(9));
        assert_eq!(t.close_of(11), None);
        assert_eq!(t.column_zero_after(src, 0), Some(7));
        assert_eq!(t.column_zero_after(src, 7), Some(11));
        assert_eq!(t.column_zero_after(src, 11), None);
    }
}
