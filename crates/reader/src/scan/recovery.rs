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
/// size cap), halving the table: a file of nothing but `(` needs 4 bytes per byte for the
/// closes and an eighth of a byte per byte for the bitmap and its ranks, so this is what
/// bounds the scanner's memory on such input.
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

/// The table: which bytes after `from` are syntactic `(` (a bitmap, with the count of
/// those before each word), and the close of each, by its rank. 4 bytes per `(` and an
/// eighth of a byte per byte, so that a file of nothing but `(` stays within the memory
/// promise (docs/decisions.md#memory).
pub(crate) struct Table<P> {
    from: usize,
    /// Bit `i` of word `i / 64`: byte `from + i` is a syntactic `(`.
    bits: Vec<u64>,
    /// The number of `(` before each word of `bits`.
    ranks: Vec<P>,
    /// The close of the `k`-th `(`; `NONE` for an unclosed list.
    closes: Vec<P>,
    unterminated: Option<Unterminated>,
}

impl<P: Position> Table<P> {
    fn build(b: &[u8], from: usize) -> Table<P> {
        let from = from.min(b.len());
        let rest = &b[from..];
        let words = rest.len().div_ceil(64);
        // Reserved once, to the count of `(` bytes (an upper bound), so that the vector
        // never holds twice its size while growing.
        let mut closes: Vec<P> = Vec::with_capacity(memchr::memchr_iter(b'(', rest).count());
        let mut bits = vec![0u64; words];
        // The lists still open form a stack threaded through their own `closes` slots
        // (each holds the rank of the list open below it), so it costs no memory.
        let mut top = P::NONE;
        let mut i = from;
        let unterminated = loop {
            let (paren, next) = next_paren(b, i);
            i = next;
            match paren {
                Paren::Open(at) => {
                    let bit = at - from;
                    bits[bit / 64] |= 1 << (bit % 64);
                    closes.push(top);
                    top = P::from_usize(closes.len() - 1);
                }
                Paren::Close(at) => {
                    // A `)` with nothing open is stray; the top-level loop reports it.
                    if top != P::NONE {
                        let k = top.to_usize();
                        top = closes[k];
                        closes[k] = P::from_usize(at);
                    }
                }
                Paren::End(unterminated) => break unterminated,
            }
        };
        while top != P::NONE {
            let k = top.to_usize();
            top = closes[k];
            closes[k] = P::NONE;
        }
        let mut ranks = Vec::with_capacity(words);
        let mut count = 0usize;
        for word in &bits {
            ranks.push(P::from_usize(count));
            count += word.count_ones() as usize;
        }
        Table {
            from,
            bits,
            ranks,
            closes,
            unterminated,
        }
    }

    fn close_of(&self, open: usize) -> Option<usize> {
        let bit = open.checked_sub(self.from)?;
        let word = *self.bits.get(bit / 64)?;
        let mask = 1u64 << (bit % 64);
        if word & mask == 0 {
            return None;
        }
        let k = self.ranks[bit / 64].to_usize() + (word & (mask - 1)).count_ones() as usize;
        let close = self.closes[k];
        (close != P::NONE).then(|| close.to_usize())
    }

    fn column_zero_after(&self, b: &[u8], pos: usize) -> Option<usize> {
        let first = (pos + 1).max(self.from) - self.from;
        let mut w = first / 64;
        let mut word = *self.bits.get(w)? & (u64::MAX << (first % 64));
        loop {
            while word != 0 {
                let at = self.from + w * 64 + word.trailing_zeros() as usize;
                if at == 0 || b[at - 1] == b'\n' {
                    return Some(at);
                }
                word &= word - 1;
            }
            w += 1;
            word = *self.bits.get(w)?;
        }
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

    /// Across bitmap words: every `(` found by rank, every column-0 cut, against a plain
    /// stack matcher, on text of `(`, `)`, spaces and line breaks.
    #[test]
    fn lookups_agree_with_a_plain_matcher_across_words() {
        let mut seed = 7u32;
        let src: Vec<u8> = (0..5000)
            .map(|_| {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                [b'(', b'(', b')', b' ', b'\n'][(seed >> 16) as usize % 5]
            })
            .collect();
        for from in [0, 1, 63, 64, 65, 700] {
            let t = MatchTable::build(&src, from);
            let mut stack = Vec::new();
            let mut close = vec![None; src.len()];
            for (i, &c) in src.iter().enumerate().skip(from) {
                if c == b'(' {
                    stack.push(i);
                } else if c == b')' {
                    if let Some(o) = stack.pop() {
                        close[o] = Some(i);
                    }
                }
            }
            for (i, &c) in src.iter().enumerate() {
                let want = if c == b'(' && i >= from {
                    close[i]
                } else {
                    None
                };
                assert_eq!(t.close_of(i), want, "close_of({i}) from {from}");
                let cut = (i + 1..src.len())
                    .find(|&k| k >= from && src[k] == b'(' && src[k - 1] == b'\n');
                assert_eq!(
                    t.column_zero_after(&src, i),
                    cut,
                    "cut after {i} from {from}"
                );
            }
        }
    }
}
