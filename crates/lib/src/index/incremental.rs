//! A buffer's definitions after one edit, reading again only the top-level forms the
//! edit touches (the reader's top-level split is the unit): the region from the end of
//! the last form before the edit to the start of the first form after it is scanned on
//! its own, and the definitions before and after it are kept, moved by the edit's length
//! and lines. The answer is the one a reading of the whole buffer gives; when that is not
//! certain, `None` (the caller reads the whole buffer):
//!
//! - the buffer before the edit had a problem (an unclosed form, string or comment: the
//!   reader's recovery depends on the whole file), or the region has one (a `"` or `#|`
//!   typed reaches past the region: its lexical state would carry on);
//! - the region could join a neighbour (no whitespace or `)` at its edges), or begins
//!   where a fresh reading would not be the same (a BOM, `#!`);
//! - the definitions reach [`MAX_SYMBOLS`], where which ones are kept depends on order.

use super::analysis::{form_spans, symbols, Symbol, MAX_SYMBOLS};
use crate::grammar::Grammar;
use crate::scan::{self, Span};

/// One edit: the bytes `start..end` of the old text replaced by `inserted` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edit {
    pub start: usize,
    pub end: usize,
    pub inserted: usize,
}

/// What a reading of the whole buffer keeps for the next edit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parse {
    /// The top-level forms' spans ([`form_spans`]).
    pub forms: Vec<Span>,
    /// The reader found no problem.
    pub clean: bool,
}

/// The definitions and parse of the whole of `bytes`.
pub fn parse(bytes: &[u8], grammar: &Grammar) -> (Vec<Symbol>, Parse) {
    // Streamed: only the forms' spans are kept, not every item.
    let mut forms = Vec::new();
    let scan = scan::scan_each(bytes, &mut |item| {
        if item.kind == scan::ItemKind::Form {
            forms.push(item.span);
        }
        std::ops::ControlFlow::Continue(())
    });
    let parse = Parse {
        forms,
        clean: scan.diagnostics.is_empty(),
    };
    (symbols(bytes, grammar), parse)
}

/// The definitions and parse of `new`, which is `old` after `edit`, from those of `old`;
/// `None` when only a reading of the whole of `new` is certain (module documentation).
pub fn reparse(
    old: &[u8],
    old_symbols: &[Symbol],
    old_parse: &Parse,
    new: &[u8],
    edit: Edit,
    grammar: &Grammar,
) -> Option<(Vec<Symbol>, Parse)> {
    if !old_parse.clean || edit.start > edit.end || edit.end > old.len() {
        return None;
    }
    let forms = &old_parse.forms;
    // The forms touched: from the first that ends at or after the edit's start to the
    // last that starts at or before its end.
    let lo = forms.partition_point(|f| f.end < edit.start);
    let hi = forms.partition_point(|f| f.start <= edit.end);
    let start = if lo == 0 { 0 } else { forms[lo - 1].end };
    let old_end = forms.get(hi).map_or(old.len(), |f| f.start);
    let grown = edit.inserted as isize - (edit.end - edit.start) as isize;
    let new_end = usize::try_from(old_end as isize + grown).ok()?;
    if new_end > new.len() || new_end < start || new.len() as isize != old.len() as isize + grown {
        return None;
    }
    let region = &new[start..new_end];
    let parted = |at: usize| at == 0 || at == new.len() || new[at - 1].is_ascii_whitespace();
    let closed_before = start == 0 || new[start - 1] == b')';
    if !(closed_before || parted(start)) || !parted(new_end) || (start > 0 && fresh_start(region)) {
        return None;
    }
    let scan = scan::scan_each(region, &mut |_| std::ops::ControlFlow::Continue(()));
    if !scan.diagnostics.is_empty() {
        return None;
    }
    let lines_before = memchr::memchr_iter(b'\n', &new[..start]).count();
    let line_growth = memchr::memchr_iter(b'\n', region).count() as isize
        - memchr::memchr_iter(b'\n', &old[start..old_end]).count() as isize;
    let mut out: Vec<Symbol> = Vec::new();
    out.extend(old_symbols.iter().filter(|s| s.span.end <= start).cloned());
    for mut s in symbols(region, grammar) {
        moved(&mut s, start as isize, lines_before as isize);
        out.push(s);
    }
    for s in old_symbols.iter().filter(|s| s.span.start >= old_end) {
        let mut s = s.clone();
        moved(&mut s, grown, line_growth);
        out.push(s);
    }
    if count(&out) >= MAX_SYMBOLS {
        return None;
    }
    let mut new_forms: Vec<Span> = forms[..lo].to_vec();
    new_forms.extend(
        form_spans(region)
            .into_iter()
            .map(|f| shift(f, start as isize)),
    );
    new_forms.extend(forms[hi..].iter().map(|&f| shift(f, grown)));
    let parse = Parse {
        forms: new_forms,
        clean: true,
    };
    Some((out, parse))
}

/// Whether a reading that starts at `region` would take its first bytes for what only
/// the start of a file holds.
fn fresh_start(region: &[u8]) -> bool {
    region.starts_with(b"\xEF\xBB\xBF") || region.starts_with(b"#!")
}

fn shift(span: Span, by: isize) -> Span {
    Span::new(
        (span.start as isize + by) as usize,
        (span.end as isize + by) as usize,
    )
}

/// `s` and its children moved by `by` bytes and `lines` lines.
fn moved(s: &mut Symbol, by: isize, lines: isize) {
    s.span = shift(s.span, by);
    s.name_span = shift(s.name_span, by);
    s.line = (s.line as isize + lines) as usize;
    for c in &mut s.children {
        moved(c, by, lines);
    }
}

fn count(symbols: &[Symbol]) -> usize {
    symbols.iter().map(|s| 1 + count(&s.children)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "; a file\n(in-package :x)\n\n(defun alpha (a) \"Doc.\" (beta a))\n#+sbcl\n(defmacro gamma () `(progn))\n(progn (defun delta ()) (defvar *e* 1))\n#| block |#\n(defstruct point x y)\n(defmethod area :around ((s shape)) (call-next-method))\nfoo\n(defun omega () 'end)\n";

    /// Small texts typed into the file: each may open or close a form, string or comment.
    const PIECES: [&str; 16] = [
        "(",
        ")",
        "\"",
        "#|",
        "|#",
        ";",
        "\n",
        " ",
        "x",
        "(defun new (y) y)",
        "#+sbcl ",
        "'",
        "\\",
        "|",
        "(progn (defun inner ()))",
        "#\\(",
    ];

    #[test]
    fn an_edit_reparsed_gives_what_the_whole_buffer_gives() {
        edits_agree(&PIECES, 3);
    }

    /// Prefixes that take the datum after them, typed at the end of a region: the
    /// form after the region is theirs in a whole reading.
    #[test]
    fn a_prefix_typed_before_a_form_gives_what_the_whole_buffer_gives() {
        let prefixes = [
            "`", ",", ",@", "#'", "#.", "#1=", "#-sbcl ", "#+(or) ", "#p", "#c", "#s", "#a", "#*",
            "#:", "#,", "#0a", "'", "#+sbcl ", "\n", "|a", "#\\", "#+",
        ];
        edits_agree(&prefixes, 5);
    }

    fn edits_agree(pieces: &[&str], seed: u64) {
        let grammar = Grammar::builtin();
        let mut seed = seed;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n.max(1)
        };
        let (mut incremental, mut whole) = (0, 0);
        for _ in 0..300 {
            let mut text = TEXT.as_bytes().to_vec();
            let (mut symbols, mut parse) = super::parse(&text, &grammar);
            for _ in 0..12 {
                let start = next(text.len() + 1);
                let end = (start + next(4)).min(text.len());
                let piece = if next(3) == 0 {
                    ""
                } else {
                    pieces[next(pieces.len())]
                };
                let mut new = text[..start].to_vec();
                new.extend_from_slice(piece.as_bytes());
                new.extend_from_slice(&text[end..]);
                let edit = Edit {
                    start,
                    end,
                    inserted: piece.len(),
                };
                let want = super::parse(&new, &grammar);
                match reparse(&text, &symbols, &parse, &new, edit, &grammar) {
                    Some(got) => {
                        incremental += 1;
                        assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&new));
                    }
                    None => whole += 1,
                }
                (symbols, parse) = want;
                text = new;
            }
        }
        // Both ways are taken (the comparison above is not vacuous).
        assert!(incremental > 300 && whole > 100, "{incremental} {whole}");
    }
}
