//! Fuzz target for the views over half-edited files (docs/views.md,
//! docs/reader.md#runaway-strings-and-comments).
//!
//! The first bytes of the input choose a half-done edit (none; delete a `)`, `(` or `"`;
//! insert a stray `"`; open a `#|`), where it goes, and the view options; the rest is the
//! file. Every view is made of the edited file (collapsed, by name, by content, each
//! comments setting, raw, text grep, a page at an offset) and checked:
//!
//! 1. no panic, in the scanner, the outline or any view;
//! 2. the content is whole lines (empty or ending with a newline);
//! 3. every numbered line (`N: ` / `N- `) names a line of the file, and numbered lines
//!    come in increasing order;
//! 4. a `next_offset` comes with `truncated` and moves on; a truncated view without one
//!    says in a note how to read the rest;
//! 5. the same input gives the same view (the streamed outline scans the file anew on
//!    each walk).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use lisp_read_file::grammar::Grammar;
use lisp_read_file::outline::StreamedOutline;
use lisp_read_file::view::Pattern;
use lisp_read_file::source::Source;
use lisp_read_file::view::{render, render_streamed, Comments, View, ViewOptions};

fn grammar() -> &'static Grammar {
    static GRAMMAR: OnceLock<Grammar> = OnceLock::new();
    GRAMMAR.get_or_init(Grammar::builtin)
}

/// Applies edit `kind` at the `pick`-th place of its kind (wrapping), as the mutation
/// benchmark does, with no lexing: a byte of the right kind, or any place for inserts.
fn edit(file: &[u8], kind: u8, pick: usize) -> Vec<u8> {
    let mut out = file.to_vec();
    let find = |c: u8| {
        let places: Vec<usize> = (0..file.len()).filter(|&i| file[i] == c).collect();
        (!places.is_empty()).then(|| places[pick % places.len()])
    };
    match kind % 6 {
        1 => find(b')').map(|at| out.remove(at)),
        2 => find(b'(').map(|at| out.remove(at)),
        3 => find(b'"').map(|at| out.remove(at)),
        4 => {
            out.insert(pick % (file.len() + 1), b'"');
            None
        }
        5 => {
            let at = pick % (file.len() + 1);
            out.splice(at..at, *b"#|");
            None
        }
        _ => None,
    };
    out
}

/// Checks 2–4 on one view; `total` is the file's line count. Raw lines without numbers
/// are the file's own text, so only views with numbered lines are read for numbers.
fn check(view: &View, total: usize, options: &ViewOptions, lisp: bool) {
    let numbered = (lisp && options.collapsed)
        || options.line_numbers
        || options.content_pattern.is_some()
        || options.name_pattern.is_some();
    let c = &view.content;
    assert!(c.is_empty() || c.ends_with('\n'), "content is not whole lines");
    let mut last = 0usize;
    for line in c.lines().filter(|_| numbered) {
        let digits = line.trim_start();
        let n: String = digits.chars().take_while(|ch| ch.is_ascii_digit()).collect();
        let rest = &digits[n.len()..];
        if n.is_empty() || !(rest.starts_with(": ") || rest.starts_with("- ") || rest == ":" || rest == "-") {
            continue; // a note, a `--` separator, or raw text without numbers
        }
        let number: usize = n.parse().expect("a line number");
        assert!(number >= 1 && number <= total.max(1), "line {number} of {total}");
        assert!(number >= last, "line numbers go back: {number} after {last}");
        last = number;
    }
    // A continuation means a truncated view; a truncated view without one (a form cut at
    // the limit, the last on the page) says in its note how to read the rest.
    assert!(view.next_offset.is_none() || view.truncated, "next_offset without truncated");
    // Notes give numbers, never a placeholder (found by this target: `limit=...`).
    assert!(!c.contains("=..."), "a note with a placeholder: {c:?}");
    if view.truncated && view.next_offset.is_none() {
        assert!(c.contains("offset="), "truncated with no way to go on: {c:?}");
    }
    if let Some(next) = view.next_offset {
        assert!(next > options.offset || options.limit == 0, "the next page does not move on");
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let (head, file) = data.split_at(4);
    let edited = edit(file, head[0], usize::from(head[1]) << 8 | usize::from(head[2]));
    let source = Source::new(&edited);
    let total = source.line_count();
    let outline = StreamedOutline::new(&edited, grammar());
    let word = Pattern::new("a|f|x", true).expect("a valid pattern");
    let flags = head[3];
    let offset = usize::from(flags >> 4) * total / 16;
    let limit = [1, 2, 5, 2000][usize::from(flags & 3)];
    let comments = [Comments::None, Comments::Headers, Comments::Preceding, Comments::All]
        [usize::from((flags >> 2) & 3)];
    let base = ViewOptions {
        offset,
        limit,
        comments,
        ..ViewOptions::default()
    };
    let variants = [
        base.clone(),
        ViewOptions { name_pattern: Some(word.clone()), ..base.clone() },
        ViewOptions { content_pattern: Some(word.clone()), ..base.clone() },
        ViewOptions { collapsed: false, line_numbers: true, ..base.clone() },
    ];
    for options in &variants {
        let view = render_streamed(&source, &outline, options);
        check(&view, total, options, true);
        // 5: the same view again.
        assert_eq!(render_streamed(&source, &outline, options).content, view.content);
    }
    // The text views of the same bytes (a file that is not Lisp).
    for options in [&variants[0], &variants[2], &variants[3]] {
        let view = render(&source, None, options);
        check(&view, total, options, false);
    }
});
