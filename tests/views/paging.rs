//! Paging of the collapsed view: following `next_offset` from 0 to the end shows every
//! form exactly once and every page makes progress, whatever the line endings and however
//! many forms share a line.
//!
//! The rule: entries (forms, shown comments, notes) starting on the same source line are
//! one group that is never split across pages. A group that does not fit in what is left
//! of a page starts the next page; a group larger than a whole page is shown cut at
//! `limit` lines, and its note counts the further forms of that line and says how to read
//! them (the line raw), so that a page stays within `limit` however many forms share a
//! line. Every form is shown exactly once, or counted exactly once in such a note.

use lisp_read_file::grammar::Grammar;
use lisp_read_file::guard::{Guard, DEFAULT_MAX_FILE_BYTES};
use lisp_read_file::scan::{scan, ItemKind};
use lisp_read_file::tool::{read_loaded, ReadRequest, ReadResult};
use std::collections::BTreeMap;

fn read(bytes: &[u8], edit: impl Fn(&mut ReadRequest)) -> ReadResult {
    let file = Guard::unconfined(DEFAULT_MAX_FILE_BYTES)
        .check_bytes("gen.lisp", bytes.to_vec())
        .unwrap();
    let mut request = ReadRequest::new("gen.lisp");
    edit(&mut request);
    read_loaded(file, &Grammar::builtin(), &request, Some(true)).unwrap()
}

/// What following the pages showed: how often each `fN` was shown, and how many forms
/// the notes of cut lines count as not shown, by 1-based line.
#[derive(Default)]
struct Followed {
    seen: BTreeMap<usize, usize>,
    hidden: BTreeMap<usize, usize>,
    /// The 1-based lines a page skipped to start at the first match, as its note says.
    skipped: Vec<std::ops::RangeInclusive<usize>>,
}

/// The lines of "[This window starts at the first match, line L: the forms from line A to
/// line B are not shown ...]".
fn skipped_in(note: &str) -> Option<std::ops::RangeInclusive<usize>> {
    let rest = note.strip_prefix("[This window starts at the first match, line ")?;
    let rest = rest.split_once("the forms from line ")?.1;
    let (from, rest) = rest.split_once(" to line ")?;
    let to = rest.split(' ').next()?;
    Some(from.parse().ok()?..=to.parse().ok()?)
}

/// The count of "N more forms on that line" in a note of "Forms at line L", by L.
fn hidden_in(note: &str) -> Option<(usize, usize)> {
    let line = note.strip_prefix("[Forms at line ")?;
    let line: usize = line.split(' ').next()?.parse().ok()?;
    let count = note.split("; ").nth(1)?.split(' ').next()?.parse().ok()?;
    Some((line, count))
}

/// Follows `next_offset` from 0.
fn follow(bytes: &[u8], limit: usize, name_pattern: Option<&str>) -> Followed {
    let mut followed = Followed::default();
    let mut offset = 0;
    for _ in 0..10_000 {
        let r = read(bytes, |r| {
            r.limit = limit;
            r.offset = offset;
            r.name_pattern = name_pattern.map(str::to_string);
        });
        for (line, count) in r.content.lines().filter_map(hidden_in) {
            *followed.hidden.entry(line).or_insert(0) += count;
        }
        followed
            .skipped
            .extend(r.content.lines().filter_map(skipped_in));
        let seen = &mut followed.seen;
        for line in r.content.lines().filter(|l| !l.starts_with('[')) {
            // Each form's first line names it once: `(defun fN ...`.
            for part in line.split("(defun f").skip(1) {
                let n: usize = part
                    .split(|c: char| !c.is_ascii_digit())
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                *seen.entry(n).or_insert(0) += 1;
            }
        }
        match r.meta.next_offset {
            None => return followed,
            Some(next) => {
                assert!(next > offset, "offset {offset} is followed by {next}");
                assert!(
                    r.content.contains(&format!("offset={next}")),
                    "{}",
                    r.content
                );
                offset = next;
            }
        }
    }
    panic!("paging did not end");
}

/// Files of `count` one-line forms, `per_line` to a line, with the line ending `eol`.
fn generated(count: usize, per_line: usize, eol: &str) -> Vec<u8> {
    let mut out = String::new();
    for k in 0..count {
        out.push_str(&format!("(defun f{k} () {k})"));
        out.push_str(if (k + 1) % per_line == 0 { eol } else { " " });
    }
    out.into_bytes()
}

#[test]
fn following_next_offset_shows_every_form_once() {
    let mut files = Vec::new();
    for eol in ["\n", "\r\n", "\r"] {
        for per_line in [1, 2, 3, 7] {
            files.push((
                format!("{per_line} per line, {eol:?}"),
                generated(40, per_line, eol),
            ));
        }
    }
    // Mixed: CR-only lines inside LF lines, a form spanning lines, blank lines.
    let mut mixed = generated(10, 3, "\r");
    mixed.extend(b"\n(defun f ()\n  10) (defun f () 11)\n\n");
    mixed.extend(generated(30, 4, "\r\n"));
    files.push(("mixed".into(), renumber(&mixed)));
    for (what, bytes) in &files {
        let forms = String::from_utf8_lossy(bytes).matches("(defun f").count();
        // The line of each form, as the reader counts lines.
        let lines: Vec<usize> = scan(bytes)
            .items
            .iter()
            .filter(|i| i.kind == ItemKind::Form)
            .map(|i| i.start_line)
            .collect();
        assert_eq!(lines.len(), forms, "{what}");
        for limit in [1, 2, 3, 5, 2000] {
            for name_pattern in [None, Some("f1")] {
                let f = follow(bytes, limit, name_pattern);
                let context = format!(
                    "{what}, limit {limit}, {name_pattern:?}: {:?} {:?}",
                    f.seen, f.hidden
                );
                assert!(f.seen.values().all(|&n| n == 1), "{context}");
                // The forms not shown are exactly those the notes count, line by line.
                let mut unseen: BTreeMap<usize, usize> = BTreeMap::new();
                for (k, &line) in lines.iter().enumerate() {
                    // Forms a page skipped to start at the first match are said once, by
                    // that page's note (docs/views.md#matches-outside-the-window).
                    let skipped = f.skipped.iter().any(|r| r.contains(&line));
                    if !f.seen.contains_key(&k) && !skipped {
                        *unseen.entry(line).or_insert(0) += 1;
                    }
                }
                assert_eq!(unseen, f.hidden, "{context}");
                if limit >= 7 {
                    assert!(f.hidden.is_empty(), "{context}");
                }
            }
        }
    }
}

/// Gives the forms of a file distinct numbers 0, 1, 2... in order.
fn renumber(bytes: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::new();
    for (k, part) in text.split("(defun f").enumerate() {
        if k == 0 {
            out.push_str(part);
            continue;
        }
        let digits = part.chars().take_while(char::is_ascii_digit).count();
        out.push_str(&format!("(defun f{}", k - 1));
        out.push_str(&part[digits..]);
    }
    out.into_bytes()
}

#[test]
fn three_forms_on_one_line_with_limit_two() {
    // Before: the page ended with `Use offset=0` and `(c)` was never reached.
    let r = read(b"(a) (b) (c)\n(d)\n", |r| r.limit = 2);
    assert_eq!(
        r.content,
        "1: (a)\n1: (b)\n[Forms at line 1 cut after 2 lines; 1 more forms on that line are not shown. Read them with collapsed=false offset=0 limit=1, or use offset=1 to continue.]\n"
    );
    assert_eq!(r.meta.next_offset, Some(1));
    let r = read(b"(a) (b) (c)\n(d)\n", |r| {
        r.limit = 2;
        r.offset = 1;
    });
    assert_eq!((r.content.as_str(), r.meta.next_offset), ("2: (d)\n", None));
    // A group that fits in a page but not in what is left of it starts the next page.
    let r = read(b"(a)\n(b) (c)\n", |r| r.limit = 2);
    assert_eq!(r.meta.next_offset, Some(1));
    assert!(r.content.starts_with("1: (a)\n[Showing"), "{}", r.content);
}
