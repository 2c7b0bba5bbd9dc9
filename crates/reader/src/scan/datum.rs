//! Reading one datum with its reader prefixes: `'x`, `#'f`, `#+sbcl #-ccl (defun ...)`,
//! `#1=(...)`, `sb-impl::(...)`. Iterative: prefixes are counted, lists are closed by a
//! [`ListCloser`] that never recurses.

use super::lexer::{
    class, is_whitespace, skip_block_comment, skip_character, skip_line_comment,
    skip_multiple_escape, skip_string, skip_token, skip_whitespace, Class, Unterminated,
};
use super::recovery::MatchTable;
use super::Span;

/// How the list opened at some `(` ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ListEnd {
    /// Closed: the position just after the `)`, and the newlines between the `(` and the
    /// `)` when the closer counted them.
    Closed(usize, Option<usize>),
    /// Runs to the end of the input; `cut` is where recovery ends the form, if anywhere.
    Unclosed {
        open: usize,
        cut: Option<usize>,
        unterminated: Option<Unterminated>,
    },
}

/// Finds where a list ends.
pub(crate) trait ListCloser {
    fn close(&mut self, b: &[u8], open: usize) -> ListEnd;
}

/// The fast path: count depth until it returns to zero; `LINES`: count newlines too.
pub(crate) struct DepthCounter<const LINES: bool>;

impl<const LINES: bool> ListCloser for DepthCounter<LINES> {
    #[inline]
    fn close(&mut self, b: &[u8], open: usize) -> ListEnd {
        match super::lexer::close_list::<LINES>(b, open) {
            Ok(closed) => ListEnd::Closed(closed.at + 1, LINES.then_some(closed.newlines)),
            Err(unterminated) => ListEnd::Unclosed {
                open,
                cut: None,
                unterminated,
            },
        }
    }
}

impl ListCloser for &MatchTable {
    #[inline]
    fn close(&mut self, b: &[u8], open: usize) -> ListEnd {
        match self.close_of(open) {
            Some(close) => ListEnd::Closed(close + 1, None),
            None => ListEnd::Unclosed {
                open,
                cut: self.column_zero_after(b, open),
                unterminated: self.unterminated(),
            },
        }
    }
}

/// Something wrong with a datum, found while reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DatumProblem {
    /// A prefix (`'`, `#+feature`, `#.` ...) with no datum after it; at the prefix.
    MissingDatum(usize),
    Unclosed {
        open: usize,
        cut: Option<usize>,
        unterminated: Option<Unterminated>,
    },
    Unterminated(Unterminated),
    /// `#` followed by whitespace, `)` or the end: no dispatch character.
    BareHash(usize),
    /// `#<...>`: an object that cannot be read back.
    Unreadable(usize),
}

/// One datum as read, with its prefixes.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Datum {
    /// Where the datum starts, with its prefixes.
    pub start: usize,
    /// Just after the datum's last character (never trailing whitespace or comments).
    pub end: usize,
    /// Where the datum itself starts, after all prefixes; for `pkg::(...)`, the `(`.
    pub core: usize,
    /// Whether `core` is a list (`(`), as opposed to an atom, string or vector.
    pub core_is_list: bool,
    /// `#+feature` / `#-feature` in front of the core, each with its feature expression.
    pub conditionals: Vec<Span>,
    /// Whether a prefix other than a reader conditional applies to the core (`'`, `#.` ...).
    pub quoted: bool,
    /// For a core that is a list or vector: the newlines between `core` and the closing
    /// `)` (at `end - 1`), when the list closer counted them.
    pub core_newlines: Option<usize>,
    pub(crate) problem: Option<DatumProblem>,
}

/// Reads the datum starting at `start` (which must not be whitespace, a comment or `)`).
/// Whitespace and comments between a prefix and its datum belong to the datum.
pub(crate) fn read_datum(b: &[u8], start: usize, closer: &mut impl ListCloser) -> Datum {
    let mut datum = Datum {
        start,
        end: start,
        core: start,
        ..Datum::default()
    };
    let mut prefixes = Prefixes {
        needed: 1,
        open_conditionals: Vec::new(),
        last: start,
    };
    let mut i = start;
    loop {
        if i > start {
            i = skip_atmosphere(b, i, &mut datum);
            if datum.problem.is_some() {
                return datum;
            }
        }
        if i >= b.len() || b[i] == b')' {
            datum.problem = Some(DatumProblem::MissingDatum(prefixes.last));
            return datum;
        }
        match step(b, i, closer, &mut datum, &mut prefixes) {
            Step::Prefix(next) => {
                i = next;
                datum.end = i;
            }
            Step::Done => return datum,
            Step::Complete(part) => {
                if prefixes.complete(&mut datum, part) {
                    return datum;
                }
                i = part.end;
            }
        }
    }
}

/// Reader conditionals kept per form: a line of 250,000 `#+a` in front of one form
/// would otherwise cost about 100 bytes each (their spans, then their text in the
/// outline); real forms have one or two.
pub const MAX_CONDITIONALS: usize = 32;

/// The prefixes read so far in front of a datum.
struct Prefixes {
    /// How many data are still to be read: each `#+`/`#-` adds its feature expression.
    needed: usize,
    /// Open reader conditionals: (start of `#+`, value of `needed` once its feature is read).
    open_conditionals: Vec<(usize, usize)>,
    /// The last prefix's position (where a missing datum is reported).
    last: usize,
}

impl Prefixes {
    /// Records the complete datum `part`; returns whether it is the core (all read).
    fn complete(&mut self, datum: &mut Datum, part: Part) -> bool {
        datum.end = part.end;
        self.needed -= 1;
        if self.needed == 0 {
            datum.core = part.start;
            datum.core_is_list = part.is_list;
            datum.core_newlines = part.newlines;
            return true;
        }
        if let Some(&(cond_start, level)) = self.open_conditionals.last() {
            if level == self.needed {
                self.open_conditionals.pop();
                if datum.conditionals.len() < MAX_CONDITIONALS {
                    datum.conditionals.push(Span::new(cond_start, part.end));
                }
            }
        }
        false
    }

    fn prefix(&mut self, datum: &mut Datum, at: usize) {
        note_prefix(datum, self.needed, &mut self.last, at);
    }
}

/// A complete datum read after the prefixes (a feature expression, or the core).
#[derive(Clone, Copy)]
struct Part {
    start: usize,
    end: usize,
    is_list: bool,
    newlines: Option<usize>,
}

impl Part {
    fn atom(start: usize, end: usize) -> Part {
        Part {
            start,
            end,
            is_list: false,
            newlines: None,
        }
    }
}

/// What the text at a datum position is.
enum Step {
    /// A prefix; the datum goes on at this position.
    Prefix(usize),
    /// A complete datum.
    Complete(Part),
    /// The datum ends here with a problem (already recorded).
    Done,
}

/// Reads what starts at `i`: a prefix or a complete datum.
fn step(
    b: &[u8],
    i: usize,
    closer: &mut impl ListCloser,
    datum: &mut Datum,
    prefixes: &mut Prefixes,
) -> Step {
    match class(b[i]) {
        Class::Open => list(b, i, i, true, closer, datum, prefixes.needed),
        Class::DoubleQuote => match skip_string(b, i) {
            (end, true) => Step::Complete(Part::atom(i, end)),
            (_, false) => {
                datum.end = b.len();
                datum.problem = Some(DatumProblem::Unterminated(Unterminated::String(i)));
                Step::Done
            }
        },
        Class::Prefix => {
            let len = if b[i] == b',' && matches!(b.get(i + 1), Some(b'@' | b'.')) {
                2
            } else {
                1
            };
            prefixes.prefix(datum, i);
            Step::Prefix(i + len)
        }
        Class::Hash => dispatch(b, i, closer, datum, prefixes),
        _ => token(b, i, closer, datum, prefixes),
    }
}

/// The list whose `(` is at `paren`, the datum starting at `start` (`#(` starts before).
fn list(
    b: &[u8],
    start: usize,
    paren: usize,
    is_list: bool,
    closer: &mut impl ListCloser,
    datum: &mut Datum,
    needed: usize,
) -> Step {
    match closer.close(b, paren) {
        ListEnd::Closed(end, newlines) => Step::Complete(Part {
            start,
            end,
            is_list,
            newlines,
        }),
        ListEnd::Unclosed {
            open,
            cut,
            unterminated,
        } => {
            let taken = std::mem::take(datum);
            *datum = unclosed(taken, needed, is_list, open, cut, unterminated, b.len());
            Step::Done
        }
    }
}

/// A `#` dispatch: a prefix, a reader conditional, a vector, or an atom.
fn dispatch(
    b: &[u8],
    i: usize,
    closer: &mut impl ListCloser,
    datum: &mut Datum,
    prefixes: &mut Prefixes,
) -> Step {
    match read_dispatch(b, i) {
        Dispatch::Prefix(after) => {
            prefixes.prefix(datum, i);
            Step::Prefix(after.min(b.len()))
        }
        Dispatch::Conditional(after) => {
            prefixes.last = i;
            prefixes.open_conditionals.push((i, prefixes.needed));
            prefixes.needed += 1;
            Step::Prefix(after)
        }
        Dispatch::Open(paren) => list(b, i, paren, false, closer, datum, prefixes.needed),
        Dispatch::Atom(end, problem) => {
            if let Some(p) = problem {
                datum.problem = Some(p);
                if matches!(p, DatumProblem::Unterminated(_)) {
                    datum.end = end;
                    return Step::Done;
                }
            }
            Step::Complete(Part::atom(i, end))
        }
    }
}

/// A token; `pkg::(...)` (SBCL's extended package prefix) continues into a list, and
/// `pkg::` then a newline (or a comment) and a form is one datum.
fn token(
    b: &[u8],
    i: usize,
    closer: &mut impl ListCloser,
    datum: &mut Datum,
    prefixes: &mut Prefixes,
) -> Step {
    let (end, closed) = skip_token(b, i);
    if !closed {
        datum.end = b.len();
        datum.problem = Some(DatumProblem::Unterminated(Unterminated::MultipleEscape(
            find_open_bar(b, i),
        )));
        return Step::Done;
    }
    let marker = super::lexer::ends_with_package_marker(b, i, end);
    if marker && b.get(end) == Some(&b'(') {
        list(b, end, end, true, closer, datum, prefixes.needed)
    } else if marker && datum_after_atmosphere(b, end) {
        // `sb-kernel::` then a newline (or a comment) and a form: SBCL reads the form in
        // that package, one datum, as SBCL's own sources write.
        prefixes.last = i;
        Step::Prefix(end)
    } else {
        Step::Complete(Part::atom(i, end))
    }
}

/// Ends `datum` at an unclosed list: at the recovery cut, or at the end of input.
fn unclosed(
    mut datum: Datum,
    needed: usize,
    is_list: bool,
    open: usize,
    cut: Option<usize>,
    unterminated: Option<Unterminated>,
    n: usize,
) -> Datum {
    datum.end = cut.unwrap_or(n);
    datum.problem = Some(DatumProblem::Unclosed {
        open,
        cut,
        unterminated,
    });
    if needed == 1 {
        // Still classifiable: `(defun broken (x` is a defun.
        datum.core = open;
        datum.core_is_list = is_list;
    }
    datum
}

/// Whether blank space or comments start at `at` and a datum follows them (not a `)`,
/// not the end of input, not an unterminated comment).
fn datum_after_atmosphere(b: &[u8], at: usize) -> bool {
    let starts_atmosphere = match b.get(at) {
        Some(b';') => true,
        Some(b'#') => super::lexer::is_block_comment_start(b, at),
        Some(&c) => class(c) == Class::Whitespace,
        None => false,
    };
    if !starts_atmosphere {
        return false;
    }
    let mut scratch = Datum::default();
    let next = skip_atmosphere(b, at, &mut scratch);
    scratch.problem.is_none() && next < b.len() && b[next] != b')'
}

fn note_prefix(datum: &mut Datum, needed: usize, last_prefix: &mut usize, at: usize) {
    *last_prefix = at;
    if needed == 1 {
        datum.quoted = true;
    }
}

/// The first unclosed `|` of the token at `i` (for the diagnostic's position).
fn find_open_bar(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'|' => {
                let (end, closed) = skip_multiple_escape(b, i);
                if !closed {
                    return i;
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    b.len()
}

/// The first position at or after `i` that is not whitespace or a comment.
pub(crate) fn skip_blank(b: &[u8], i: usize) -> usize {
    skip_atmosphere(b, i, &mut Datum::default())
}

/// Whitespace and comments between the parts of a datum.
fn skip_atmosphere(b: &[u8], mut i: usize, datum: &mut Datum) -> usize {
    loop {
        i = skip_whitespace(b, i);
        match b.get(i) {
            Some(b';') => i = skip_line_comment(b, i),
            Some(b'#') if super::lexer::is_block_comment_start(b, i) => {
                let (end, closed) = skip_block_comment(b, i);
                if !closed {
                    datum.problem = Some(DatumProblem::Unterminated(Unterminated::BlockComment(i)));
                    datum.end = end;
                }
                i = end;
                if !closed {
                    return i;
                }
            }
            _ => return i,
        }
    }
}

/// What a `#` dispatch at token start is, for the datum reader.
enum Dispatch {
    /// A prefix of the next datum (`#'`, `#.`, `#n=`, `#C`, `#A`, `#S`, `#P`, unknown):
    /// the position after it.
    Prefix(usize),
    /// `#+` or `#-`: the position after it; a feature expression and a datum follow.
    Conditional(usize),
    /// `#(` or `#n(`: a vector; the position of its `(`.
    Open(usize),
    /// A complete datum (`#\x`, `#:foo`, `#xFF`, `#*101`, `#n#`, `#<...>`), its end.
    Atom(usize, Option<DatumProblem>),
}

/// `i` at a `#` that starts a token (top level, or after a prefix).
fn read_dispatch(b: &[u8], i: usize) -> Dispatch {
    let n = b.len();
    let mut j = i + 1;
    while j < n && b[j].is_ascii_digit() {
        j += 1;
    }
    let Some(&sub) = b.get(j) else {
        return Dispatch::Atom(n, Some(DatumProblem::BareHash(i)));
    };
    match sub.to_ascii_lowercase() {
        b'+' | b'-' => Dispatch::Conditional(j + 1),
        b'(' => Dispatch::Open(j),
        b'\\' => {
            let (end, closed) = skip_character(b, j - 1);
            let problem =
                (!closed).then_some(DatumProblem::Unterminated(Unterminated::MultipleEscape(i)));
            Dispatch::Atom(end, problem)
        }
        // Tokens read right after the dispatch character (SBCL reads `#x` with
        // *read-suppress* as one extended token, so `#x 1F` is two data).
        b':' | b'*' | b'b' | b'o' | b'x' | b'r' => {
            let (end, closed) = skip_token(b, j + 1);
            let problem =
                (!closed).then_some(DatumProblem::Unterminated(Unterminated::MultipleEscape(i)));
            Dispatch::Atom(end, problem)
        }
        b'#' => Dispatch::Atom(j + 1, None),
        b'<' => Dispatch::Atom(
            super::lexer::unreadable_end(b, j),
            Some(DatumProblem::Unreadable(i)),
        ),

        _ if is_whitespace(sub) || sub == b')' => {
            // `#` then whitespace or `)`: no dispatch character at all.
            Dispatch::Atom(j, Some(DatumProblem::BareHash(i)))
        }
        // `#'`, `#.`, `#,`, `#n=`, `#C`, `#A`, `#S`, `#P`, and unknown dispatch
        // characters such as `#?` or `#[` prefix the next datum. A multi-byte character
        // is one dispatch character.
        _ => Dispatch::Prefix(j + super::lexer::char_len_at(b, j)),
    }
}

/// Iterates over the elements of a list, each read as a datum. `open` is the `(`; the
/// iteration stops at the `)` or at `limit` (the end of the enclosing form).
pub struct Elements<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Elements<'a> {
    pub fn new(b: &'a [u8], open: usize, limit: usize) -> Self {
        Elements {
            b: &b[..limit],
            i: open + 1,
        }
    }
}

impl Elements<'_> {
    /// Whether another element follows, without reading it.
    pub(crate) fn has_next(&mut self) -> bool {
        self.i = skip_blank(self.b, self.i);
        self.i < self.b.len() && self.b[self.i] != b')'
    }

    /// Where the next element starts, without reading it.
    pub(crate) fn peek_start(&mut self) -> Option<usize> {
        self.has_next().then_some(self.i)
    }
}

impl Iterator for Elements<'_> {
    type Item = Datum;

    fn next(&mut self) -> Option<Datum> {
        let b = self.b;
        let mut scratch = Datum::default();
        self.i = skip_atmosphere(b, self.i, &mut scratch);
        if scratch.problem.is_some() || self.i >= b.len() || b[self.i] == b')' {
            self.i = b.len();
            return None;
        }
        let start = self.i;
        if class(b[start]) == Class::Constituent {
            // A plain token (most elements the outline reads: operators, names), read
            // without the general reader's state: what `read_datum` would return.
            let (end, closed) = skip_token(b, start);
            // `pkg::(...)` and `pkg::` before a datum are one datum: the general reader's.
            let package_list = super::lexer::ends_with_package_marker(b, start, end)
                && (b.get(end) == Some(&b'(') || datum_after_atmosphere(b, end));
            if closed && !package_list {
                self.i = end;
                return Some(Datum {
                    start,
                    end,
                    core: start,
                    ..Datum::default()
                });
            }
        }
        let mut datum = read_datum(b, start, &mut DepthCounter::<false>);
        // Tolerance inside a list: a prefix right before `)` yields no element.
        if datum.end <= start {
            self.i = b.len();
            return None;
        }
        self.i = datum.end;
        datum.problem = None;
        Some(datum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Elements` without its plain-token shortcut: every element through `read_datum`.
    fn elements_by_the_reader(b: &[u8], open: usize, limit: usize) -> Vec<Datum> {
        let b = &b[..limit];
        let mut i = open + 1;
        let mut out = Vec::new();
        loop {
            let mut scratch = Datum::default();
            i = skip_atmosphere(b, i, &mut scratch);
            if scratch.problem.is_some() || i >= b.len() || b[i] == b')' {
                return out;
            }
            let mut datum = read_datum(b, i, &mut DepthCounter::<false>);
            if datum.end <= i {
                return out;
            }
            i = datum.end;
            datum.problem = None;
            out.push(datum);
        }
    }

    #[test]
    fn the_token_shortcut_reads_what_the_reader_reads() {
        const PIECES: &[&[u8]] = &[
            b"foo",
            b"pkg::(a b)",
            b"pkg::x",
            b"a|b c|d",
            b"a\\ b",
            b"|open",
            b"x#y",
            b"#:g",
            b"#'f",
            b"#+sbcl",
            b"'q",
            b"1.5",
            b"\"s\"",
            b"(l)",
            b";c\n",
            b"#|c|#",
            b"\xce\xbb",
            b"cl:defun",
            b" ",
            b"\n",
            b"#\\(",
            b"`(a ,b)",
            b"a.b",
            b"-",
        ];
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..5000 {
            let mut src = b"(".to_vec();
            for _ in 0..(x % 7) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                src.extend_from_slice(PIECES[(x % PIECES.len() as u64) as usize]);
                if x.is_multiple_of(3) {
                    src.push(b' ');
                }
            }
            if !x.is_multiple_of(5) {
                src.push(b')');
            }
            let fast: Vec<Datum> = Elements::new(&src, 0, src.len()).collect();
            assert_eq!(
                fast,
                elements_by_the_reader(&src, 0, src.len()),
                "{:?}",
                String::from_utf8_lossy(&src)
            );
        }
    }
}
