//! Property tests of the scanner and outline invariants (docs/reader.md).
//!
//! For any input bytes (Lisp-like token soup, mutated well-formed Lisp, random bytes):
//!
//! 1. `scan` and `outline_bytes` never panic;
//! 2. the items tile the input: non-empty, contiguous, from 0 to the end;
//! 3. line numbers are 1-based and agree with the newlines before each offset;
//! 4. whitespace items hold only whitespace (a leading BOM aside), other items never start
//!    with whitespace;
//! 5. a form's core lies inside it, its conditionals too, each starting `#+` or `#-`;
//! 6. diagnostics point at a valid item and at a byte of the input;
//! 7. the outline's items are the scan's non-whitespace items, children inside parents;
//! 8. scanning and outlining are deterministic.
//!
//! For balanced, well-formed Lisp (generated together with the items it must give):
//! the scan finds exactly the generated items with no diagnostics, and
//! 9. scanning `a ++ "\n" ++ b` gives the items of `a` followed by those of `b`, shifted.

use lisp_read_file::grammar::Grammar;
use lisp_read_file::outline::{outline_bytes, OutlineItem};
use lisp_read_file::scan::{scan, Item, ItemKind, Scan, Span};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use proptest::test_runner::TestCaseError;
use std::sync::OnceLock;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Cases per property: enough to find bugs, small enough that the file runs in seconds in
/// a debug build. Set `PROPTEST_CASES` to run more.
const CASES: u32 = 512;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(CASES),
        ..ProptestConfig::default()
    }
}

fn grammar() -> &'static Grammar {
    static GRAMMAR: OnceLock<Grammar> = OnceLock::new();
    GRAMMAR.get_or_init(Grammar::builtin)
}

fn show(bytes: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(bytes))
}

// ----------------------------------------------------------------------------------------
// Checks
// ----------------------------------------------------------------------------------------

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0c)
}

/// `#+` or `#-`, allowing the numeric argument SBCL ignores with a warning (`#1+sbcl`),
/// which the scanner records as a conditional too.
fn is_conditional(t: &[u8]) -> bool {
    let digits = t.iter().skip(1).take_while(|b| b.is_ascii_digit()).count();
    t.first() == Some(&b'#') && matches!(t.get(1 + digits), Some(b'+' | b'-'))
}

/// `nl[k]` is the number of `\n` in `input[..k]`, for `k` in `0..=input.len()`.
fn newlines_before(input: &[u8]) -> Vec<usize> {
    let mut nl = Vec::with_capacity(input.len() + 1);
    let mut count = 0;
    nl.push(0);
    for &b in input {
        count += usize::from(b == b'\n');
        nl.push(count);
    }
    nl
}

/// Invariants 2 to 6 on one scan of `input`.
fn check_scan(input: &[u8], s: &Scan) -> Result<(), TestCaseError> {
    let nl = newlines_before(input);
    let n = input.len();

    // 2: lossless cover.
    let mut pos = 0;
    for (k, item) in s.items.iter().enumerate() {
        let Span { start, end } = item.span;
        prop_assert_eq!(
            start,
            pos,
            "item {} does not start where item {} ended",
            k,
            k
        );
        prop_assert!(start < end, "item {} is empty at {}", k, start);
        prop_assert!(
            end <= n,
            "item {} ends at {}, past the input ({})",
            k,
            end,
            n
        );
        pos = end;
    }
    prop_assert_eq!(pos, n, "the items stop short of the end");
    let rebuilt: Vec<u8> = s
        .items
        .iter()
        .flat_map(|i| input[i.span.start..i.span.end].iter().copied())
        .collect();
    prop_assert!(rebuilt == input, "concatenated items differ from the input");

    // line_count: newlines, plus a last line without one (a lone BOM is no text).
    let expected_lines = if n == 0 || input == BOM {
        0
    } else {
        nl[n] + usize::from(input[n - 1] != b'\n')
    };
    prop_assert_eq!(s.line_count, expected_lines, "line_count");

    for (k, item) in s.items.iter().enumerate() {
        let Span { start, end } = item.span;
        let text = &input[start..end];

        // 3: lines.
        prop_assert!(
            item.start_line <= item.end_line,
            "item {}: lines reversed",
            k
        );
        prop_assert_eq!(item.start_line, 1 + nl[start], "item {}: start_line", k);
        prop_assert_eq!(item.end_line, 1 + nl[end - 1], "item {}: end_line", k);

        // 4: whitespace, and the shape of each kind (docs/reader.md table).
        match item.kind {
            ItemKind::Whitespace => {
                let body = if k == 0 && text.starts_with(BOM) {
                    &text[BOM.len()..]
                } else {
                    text
                };
                prop_assert!(
                    body.iter().all(|&b| is_ws(b)),
                    "whitespace item {} holds {}",
                    k,
                    show(text)
                );
            }
            kind => {
                prop_assert!(
                    !is_ws(text[0]),
                    "{:?} item {} starts with whitespace: {}",
                    kind,
                    k,
                    show(text)
                );
            }
        }
        match item.kind {
            ItemKind::Comment => prop_assert!(
                (text.starts_with(b";") && !text.contains(&b'\n'))
                    || is_block_comment_opening(text),
                "comment item {} is {}",
                k,
                show(text)
            ),
            ItemKind::Stray => prop_assert!(text == b")", "stray item {} is {}", k, show(text)),
            ItemKind::Shebang => prop_assert!(
                text.starts_with(b"#!")
                    && !text.contains(&b'\n')
                    && (start == 0 || (start == BOM.len() && input.starts_with(BOM))),
                "shebang item {} is {} at {}",
                k,
                show(text),
                start
            ),
            ItemKind::Form | ItemKind::Whitespace => {}
        }

        // 5: the core and the conditionals of forms.
        if item.kind == ItemKind::Form {
            prop_assert!(
                start <= item.core && item.core < end,
                "item {}: core {} outside {}..{}",
                k,
                item.core,
                start,
                end
            );
            for c in &item.conditionals {
                prop_assert!(
                    start <= c.start && c.start < c.end && c.end <= end,
                    "item {}: conditional {:?} outside {}..{}",
                    k,
                    c,
                    start,
                    end
                );
                let t = &input[c.start..c.end];
                prop_assert!(is_conditional(t), "item {}: conditional {}", k, show(t));
            }
        }
    }

    // 6: diagnostics.
    for d in &s.diagnostics {
        prop_assert!(
            d.item < s.items.len(),
            "diagnostic item {} out of range",
            d.item
        );
        prop_assert!(
            d.offset < n,
            "diagnostic offset {} outside the input",
            d.offset
        );
        let span = s.items[d.item].span;
        prop_assert!(
            span.start <= d.offset && d.offset < span.end,
            "diagnostic {:?} at {} outside its item {:?}",
            d.kind,
            d.offset,
            span
        );
        prop_assert_eq!(d.line, 1 + nl[d.offset], "diagnostic line");
        prop_assert!(d.column >= 1, "diagnostic column is 1-based");
    }
    Ok(())
}

fn check_children(nl: &[usize], parent: &OutlineItem, depth: usize) -> Result<(), TestCaseError> {
    let Some(form) = &parent.form else {
        return Ok(());
    };
    let mut previous_end = parent.start;
    for child in &form.children {
        prop_assert!(
            parent.start <= child.start && child.start < child.end && child.end <= parent.end,
            "child {}..{} outside parent {}..{}",
            child.start,
            child.end,
            parent.start,
            parent.end
        );
        prop_assert!(child.start >= previous_end, "children overlap");
        previous_end = child.end;
        prop_assert_eq!(child.kind, ItemKind::Form);
        prop_assert_eq!(child.start_line, 1 + nl[child.start], "child start_line");
        prop_assert_eq!(child.end_line, 1 + nl[child.end - 1], "child end_line");
        prop_assert!(depth < 64, "children nest too deep");
        check_children(nl, child, depth + 1)?;
    }
    Ok(())
}

/// Invariants 1 to 8 on `input`.
fn check_all(input: &[u8]) -> Result<(), TestCaseError> {
    let s = scan(input);
    check_scan(input, &s)?;

    // 8: determinism.
    let again = scan(input);
    prop_assert!(again.items == s.items, "items differ between two scans");
    prop_assert!(again.diagnostics == s.diagnostics, "diagnostics differ");
    prop_assert_eq!(again.line_count, s.line_count);

    // 7: the outline.
    let o = outline_bytes(input, grammar());
    prop_assert_eq!(o.byte_length, input.len());
    prop_assert_eq!(o.line_count, s.line_count);
    prop_assert!(o.diagnostics == s.diagnostics, "outline diagnostics differ");
    let non_ws: Vec<&Item> = s
        .items
        .iter()
        .filter(|i| i.kind != ItemKind::Whitespace)
        .collect();
    prop_assert_eq!(o.items.len(), non_ws.len(), "outline item count");
    let nl = newlines_before(input);
    for (oi, si) in o.items.iter().zip(&non_ws) {
        prop_assert_eq!((oi.start, oi.end), (si.span.start, si.span.end));
        prop_assert_eq!(oi.kind, si.kind);
        prop_assert_eq!((oi.start_line, oi.end_line), (si.start_line, si.end_line));
        prop_assert_eq!(oi.form.is_some(), oi.kind == ItemKind::Form);
        check_children(&nl, oi, 0)?;
    }
    let o2 = outline_bytes(input, grammar());
    prop_assert_eq!(format!("{o:?}"), format!("{o2:?}"), "outline differs");
    Ok(())
}

// ----------------------------------------------------------------------------------------
// Lisp-like token soup
// ----------------------------------------------------------------------------------------

/// (weight, token): the syntax that changes the scanner's state, and some filler.
const SOUP: &[(usize, &[u8])] = &[
    (12, b"("),
    (12, b")"),
    (10, b" "),
    (8, b"\n"),
    (6, b"\""),
    (4, b"\\"),
    (4, b"|"),
    (3, b"#|"),
    (3, b"|#"),
    (3, b"#\\"),
    (1, b"#\\("),
    (1, b"#\\)"),
    (1, b"#\\Space"),
    (3, b"#+"),
    (3, b"#-"),
    (2, b"#+sbcl"),
    (4, b"'"),
    (3, b"`"),
    (2, b","),
    (2, b",@"),
    (5, b";"),
    (2, b"#("),
    (2, b"#."),
    (2, b"#'"),
    (1, b"#"),
    (1, b"#!"),
    (1, b"#<"),
    (1, b">"),
    (1, b"#1="),
    (1, b"#1#"),
    (1, b"#2|"),
    (1, b"#x1F"),
    (1, b"#:g"),
    (1, b"#*101"),
    (1, b"#p\"x\""),
    (2, b"pkg::"),
    (1, b"sb-impl::("),
    (1, b":"),
    (1, b"."),
    (3, b"defun"),
    (1, b"defmacro"),
    (1, b"defmethod"),
    (1, b"progn"),
    (1, b"eval-when"),
    (1, b"defpackage"),
    (1, b"in-package"),
    (6, b"x"),
    (2, b"foo-bar"),
    (2, b"42"),
    (1, b"\t"),
    (2, b"\r\n"),
    (1, b"\r"),
    (1, b"\x0c"),
    (1, BOM),
    (2, "λ".as_bytes()),
    (1, "naïve".as_bytes()),
    (1, "日本".as_bytes()),
    (1, b"\xc2\xa0"),
    (2, b"\xff"),
    (1, b"\x80"),
    (1, b"\xc3"),
    (1, b"\xe2\x82"),
    (1, b"\0"),
    (1, b"(((((((((((((((((((("),
    (1, b"))))))))))))))))))))"),
    (1, b"\n("),
    (1, b"(defun f (x) \"doc\" x)"),
];

fn soup_token() -> impl Strategy<Value = Vec<u8>> {
    let table: Vec<&'static [u8]> = SOUP
        .iter()
        .flat_map(|&(w, t)| std::iter::repeat_n(t, w))
        .collect();
    prop_oneof![
        20 => select(table).prop_map(<[u8]>::to_vec),
        1 => vec(any::<u8>(), 1..4),
        1 => "[a-z0-9*+λé-]{1,8}".prop_map(String::into_bytes),
    ]
}

/// Lisp-like text: a few hundred weighted tokens, glued together.
fn soup() -> impl Strategy<Value = Vec<u8>> {
    vec(soup_token(), 0..160).prop_map(|tokens| tokens.concat())
}

// ----------------------------------------------------------------------------------------
// Balanced, well-formed Lisp
// ----------------------------------------------------------------------------------------

/// Atoms that read as one datum wherever they appear, even at top level.
const ATOMS: &[&[u8]] = &[
    b"x",
    b"defun",
    b"foo-bar",
    b"pkg::sym",
    b"cl:car",
    b":key",
    b"|a b (c|",
    b"|;\"|",
    b"a\\ b",
    b"a\\(b",
    "λ".as_bytes(),
    "na\u{ef}ve".as_bytes(),
    b"sym\xff\xfe",
    b"*special*",
    b"+const+",
    b"1+",
    b"[x]",
    b"{y}",
    b"&optional",
    b"nil",
    b"42",
    b"-3.5",
    b"1/2",
    b"1.0d0",
    b"#x1F",
    b"#b101",
    b"#o17",
    b"#3r12",
    b"#\\a",
    b"#\\(",
    b"#\\)",
    b"#\\;",
    b"#\\\"",
    b"#\\|",
    b"#\\Space",
    b"#\\Newline",
    "#\\λ".as_bytes(),
    b"#\\\\",
    b"#\\#",
    b"#*1010",
    b"#:g1",
    b"#1#",
];

/// Data whose dispatch macro prefixes what follows: fine inside lists.
const INNER_ONLY: &[&[u8]] = &[
    b"#p\"/tmp/x\"",
    b"#c(1 2)",
    b"#2a((1 2) (3 4))",
    b"#s(point :x 1)",
    b"#.(+ 1 2)",
    b"#'car",
    b"#'(lambda (x) x)",
];

const STRING_PIECES: &[&[u8]] = &[
    b"abc",
    b" ",
    b"(",
    b")",
    b";",
    b"\\\"",
    b"\\\\",
    b"|",
    b"#|",
    b"|#",
    b"\n",
    b"\r\n",
    b"\n(defun x ()",
    "λ".as_bytes(),
    b"\xff",
];

/// Separators between the elements of a list.
const SEPARATORS: &[&[u8]] = &[
    b" ",
    b" ",
    b" ",
    b"  ",
    b"\n",
    b"\n",
    b"\n  ",
    b"\t",
    b"\r\n",
    b"\x0c",
    b" ; comment ( \" |\n",
    b"\n;; (defun inside)\n",
    b" #| c ) ( |# ",
    b" #| a #| nested ( |# b |# ",
];

/// What may stand between a `#+feature` and its datum.
const CONDITIONAL_SEPARATORS: &[&[u8]] = &[b" ", b" ", b"\n", b"\n  ", b" ; why\n", b" #|x|# "];

const FEATURES: &[&[u8]] = &[
    b"#+sbcl",
    b"#-ccl",
    b"#+(or sbcl ccl)",
    b"#-(and)",
    b"#+:ecl",
];

const PACKAGE_PREFIXES: &[&[u8]] = &[b"pkg::", b"sb-impl::", b"cl-user:"];

const PREFIXES: &[&[u8]] = &[b"'", b"`", b",", b",@", b",.", b"#'", b"#.", b"#1="];

const LINE_COMMENTS: &[&[u8]] = &[
    b";",
    b";; header (defun",
    b"; x ) ( \" |# #|",
    b"; \xce\xbb \xff",
    b";;;; Section",
];

const BLOCK_PIECES: &[&[u8]] = &[
    b"a",
    b" ",
    b"(",
    b")",
    b"\"",
    b";",
    b"\n",
    b"| x",
    b"# x",
    b"#| inner ( |#",
    "λ".as_bytes(),
];

/// Separators between top-level items.
const TOP_SEPARATORS: &[&[u8]] = &[
    b" ", b"\n", b"\n", b"\n\n", b"\r\n", b"\t", b"\x0c", b"\n  ",
];

fn string_literal() -> impl Strategy<Value = Vec<u8>> {
    vec(select(STRING_PIECES), 0..6).prop_map(|pieces| {
        let mut v = b"\"".to_vec();
        for p in pieces {
            v.extend_from_slice(p);
        }
        v.push(b'"');
        v
    })
}

fn leaf() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => select(ATOMS).prop_map(<[u8]>::to_vec),
        2 => string_literal(),
        2 => "[a-z][a-z0-9*+-]{0,7}".prop_map(String::into_bytes),
        1 => select(INNER_ONLY).prop_map(<[u8]>::to_vec),
    ]
}

/// `open`, then the elements with separators, then `)`.
fn list_of(
    open: &'static [u8],
    element: impl Strategy<Value = Vec<u8>>,
) -> impl Strategy<Value = Vec<u8>> {
    (
        prop_oneof![3 => Just(&b""[..]), 1 => select(SEPARATORS)],
        vec((element, select(SEPARATORS)), 0..5),
        prop_oneof![3 => Just(&b""[..]), 1 => select(SEPARATORS)],
    )
        .prop_map(move |(leading, elements, trailing)| {
            let mut v = open.to_vec();
            v.extend_from_slice(leading);
            let count = elements.len();
            for (k, (e, sep)) in elements.into_iter().enumerate() {
                v.extend_from_slice(&e);
                if k + 1 < count {
                    v.extend_from_slice(sep);
                }
            }
            v.extend_from_slice(trailing);
            v.push(b')');
            v
        })
}

/// One well-formed datum, possibly with prefixes, nested up to a few levels.
fn datum() -> impl Strategy<Value = Vec<u8>> {
    leaf().prop_recursive(4, 48, 5, |inner| {
        prop_oneof![
            6 => list_of(b"(", inner.clone()),
            1 => (inner.clone(), inner.clone()).prop_map(|(a, b)| [&b"("[..], &a, b" . ", &b, b")"].concat()),
            3 => (select(PREFIXES), inner.clone()).prop_map(|(p, d)| [p, &d[..]].concat()),
            1 => (select(FEATURES), select(CONDITIONAL_SEPARATORS), inner.clone())
                .prop_map(|(f, s, d)| [f, s, &d[..]].concat()),
            1 => list_of(b"#(", inner.clone()),
            1 => list_of(b"sb-impl::(", inner.clone()),
        ]
    })
}

/// The datum after the prefixes of a top-level form, with what the scanner must say of it.
#[derive(Clone, Debug)]
struct Core {
    text: Vec<u8>,
    /// Offset of the core within `text` (`pkg::(...)`: the `(`).
    offset: usize,
    is_list: bool,
    /// Whether the text ends with a closing delimiter, so the next item may follow directly.
    closed: bool,
}

fn core() -> impl Strategy<Value = Core> {
    prop_oneof![
        5 => list_of(b"(", datum()).prop_map(|text| Core { text, offset: 0, is_list: true, closed: true }),
        1 => (select(PACKAGE_PREFIXES), list_of(b"(", datum()))
            .prop_map(|(p, l)| Core { text: [p, &l[..]].concat(), offset: p.len(), is_list: true, closed: true }),
        1 => list_of(b"#(", datum()).prop_map(|text| Core { text, offset: 0, is_list: false, closed: true }),
        2 => select(ATOMS).prop_map(|a| Core { text: a.to_vec(), offset: 0, is_list: false, closed: false }),
        1 => string_literal().prop_map(|text| Core { text, offset: 0, is_list: false, closed: true }),
    ]
}

#[derive(Clone, Debug)]
enum Piece {
    Form {
        conditionals: Vec<(&'static [u8], &'static [u8])>,
        prefix: &'static [u8],
        core: Core,
    },
    LineComment(&'static [u8]),
    BlockComment(Vec<u8>),
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        8 => (
            vec((select(FEATURES), select(CONDITIONAL_SEPARATORS)), 0..3),
            prop_oneof![4 => Just(&b""[..]), 1 => select(PREFIXES)],
            core(),
        )
            .prop_map(|(conditionals, prefix, core)| Piece::Form { conditionals, prefix, core }),
        1 => select(LINE_COMMENTS).prop_map(Piece::LineComment),
        1 => vec(select(BLOCK_PIECES), 0..6).prop_map(|p| {
            let mut v = b"#|".to_vec();
            for piece in p {
                v.extend_from_slice(piece);
            }
            v.extend_from_slice(b"|#");
            Piece::BlockComment(v)
        }),
    ]
}

/// A non-whitespace item the scanner must find.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Expected {
    kind: ItemKind,
    span: Span,
    core: usize,
    core_is_list: bool,
    quoted: bool,
    conditionals: Vec<Span>,
}

impl Expected {
    fn of(item: &Item) -> Expected {
        let form = item.kind == ItemKind::Form;
        Expected {
            kind: item.kind,
            span: item.span,
            core: if form { item.core } else { item.span.start },
            core_is_list: form && item.core_is_list,
            quoted: form && item.quoted,
            conditionals: item.conditionals.clone(),
        }
    }

    fn shifted(&self, by: usize) -> Expected {
        let shift = |s: Span| Span::new(s.start + by, s.end + by);
        Expected {
            span: shift(self.span),
            core: self.core + by,
            conditionals: self.conditionals.iter().map(|&c| shift(c)).collect(),
            ..self.clone()
        }
    }
}

/// A balanced file and the items it is made of.
#[derive(Clone, Debug)]
struct Balanced {
    text: Vec<u8>,
    expected: Vec<Expected>,
}

impl Balanced {
    fn assemble(
        bom: bool,
        shebang: bool,
        pieces: Vec<(Piece, &'static [u8])>,
        trailing: &'static [u8],
    ) -> Balanced {
        let mut text = Vec::new();
        let mut expected = Vec::new();
        if bom {
            text.extend_from_slice(BOM);
        }
        // Whether the next item may start right here (no separator needed).
        let mut glue_ok = true;
        if shebang {
            let start = text.len();
            text.extend_from_slice(b"#!/usr/bin/env sbcl --script");
            expected.push(Expected {
                kind: ItemKind::Shebang,
                span: Span::new(start, text.len()),
                core: start,
                core_is_list: false,
                quoted: false,
                conditionals: Vec::new(),
            });
            text.push(b'\n');
        }
        let mut line_comment_open = false;
        for (piece, sep) in pieces {
            if line_comment_open {
                text.push(b'\n');
            } else if !sep.is_empty() || !glue_ok {
                text.extend_from_slice(if sep.is_empty() { b" " } else { sep });
            }
            let start = text.len();
            match piece {
                Piece::Form {
                    conditionals,
                    prefix,
                    core,
                } => {
                    let mut spans = Vec::new();
                    for (feature, sep) in conditionals {
                        let at = text.len();
                        text.extend_from_slice(feature);
                        spans.push(Span::new(at, text.len()));
                        text.extend_from_slice(sep);
                    }
                    text.extend_from_slice(prefix);
                    let core_at = text.len() + core.offset;
                    text.extend_from_slice(&core.text);
                    expected.push(Expected {
                        kind: ItemKind::Form,
                        span: Span::new(start, text.len()),
                        core: core_at,
                        core_is_list: core.is_list,
                        quoted: !prefix.is_empty(),
                        conditionals: spans,
                    });
                    glue_ok = core.closed;
                    line_comment_open = false;
                }
                Piece::LineComment(c) => {
                    text.extend_from_slice(c);
                    expected.push(comment(start, text.len()));
                    glue_ok = false;
                    line_comment_open = true;
                }
                Piece::BlockComment(c) => {
                    text.extend_from_slice(&c);
                    expected.push(comment(start, text.len()));
                    glue_ok = true;
                    line_comment_open = false;
                }
            }
        }
        text.extend_from_slice(trailing);
        Balanced { text, expected }
    }
}

fn comment(start: usize, end: usize) -> Expected {
    Expected {
        kind: ItemKind::Comment,
        span: Span::new(start, end),
        core: start,
        core_is_list: false,
        quoted: false,
        conditionals: Vec::new(),
    }
}

/// A balanced file; with `header`, it may start with a BOM and a `#!` line.
fn balanced(header: bool) -> impl Strategy<Value = Balanced> {
    let header = if header {
        (any::<bool>(), prop::bool::weighted(0.2)).boxed()
    } else {
        Just((false, false)).boxed()
    };
    (
        header,
        vec(
            (
                piece(),
                prop_oneof![3 => select(TOP_SEPARATORS), 1 => Just(&b""[..])],
            ),
            0..8,
        ),
        prop_oneof![Just(&b""[..]), Just(&b"\n"[..]), Just(&b"\n\n  "[..])],
    )
        .prop_map(|((bom, shebang), pieces, trailing)| {
            Balanced::assemble(bom, shebang, pieces, trailing)
        })
}

/// An edit that breaks balanced text: delete a few bytes, or insert a soup token.
#[derive(Clone, Debug)]
enum Edit {
    Delete(Index, usize),
    Insert(Index, Vec<u8>),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<Index>(), 1usize..4).prop_map(|(i, n)| Edit::Delete(i, n)),
        (any::<Index>(), soup_token()).prop_map(|(i, t)| Edit::Insert(i, t)),
    ]
}

fn apply(mut text: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        match e {
            Edit::Delete(i, n) if !text.is_empty() => {
                let at = i.index(text.len());
                let end = (at + n).min(text.len());
                text.drain(at..end);
            }
            Edit::Delete(..) => {}
            Edit::Insert(i, t) => {
                let at = i.index(text.len() + 1);
                text.splice(at..at, t.iter().copied());
            }
        }
    }
    text
}

fn non_ws(s: &Scan) -> Vec<&Item> {
    s.items
        .iter()
        .filter(|i| i.kind != ItemKind::Whitespace)
        .collect()
}

// ----------------------------------------------------------------------------------------
// Properties
// ----------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    #[test]
    fn invariants_hold_on_lisp_like_soup(input in soup()) {
        check_all(&input)?;
    }

    #[test]
    fn invariants_hold_on_random_bytes(input in vec(any::<u8>(), 0..512)) {
        check_all(&input)?;
    }

    #[test]
    fn invariants_hold_on_broken_lisp(file in balanced(true), edits in vec(edit(), 1..4)) {
        check_all(&apply(file.text, &edits))?;
    }

    #[test]
    fn balanced_lisp_scans_to_its_items(file in balanced(true)) {
        check_all(&file.text)?;
        let s = scan(&file.text);
        prop_assert!(
            s.diagnostics.is_empty(),
            "diagnostics on balanced input {}: {:?}",
            show(&file.text),
            s.diagnostics
        );
        let found: Vec<Expected> = non_ws(&s).into_iter().map(Expected::of).collect();
        prop_assert_eq!(found, file.expected, "in {}", show(&file.text));
    }

    #[test]
    fn balanced_concatenation_is_prefix_stable(a in balanced(true), b in balanced(false)) {
        let joined = [&a.text[..], b"\n", &b.text[..]].concat();
        let (sa, sb, sj) = (scan(&a.text), scan(&b.text), scan(&joined));
        prop_assert!(sj.diagnostics.is_empty(), "diagnostics: {:?}", sj.diagnostics);
        let shift = a.text.len() + 1;
        let line_shift = 1 + a.text.iter().filter(|&&c| c == b'\n').count();
        let expected: Vec<Item> = non_ws(&sa)
            .into_iter()
            .cloned()
            .chain(non_ws(&sb).into_iter().map(|i| {
                let e = Expected::of(i).shifted(shift);
                Item {
                    kind: e.kind,
                    span: e.span,
                    start_line: i.start_line + line_shift,
                    end_line: i.end_line + line_shift,
                    core: e.core,
                    core_is_list: i.core_is_list,
                    quoted: i.quoted,
                    conditionals: e.conditionals,
                }
            }))
            .collect();
        let found: Vec<Item> = non_ws(&sj).into_iter().cloned().collect();
        prop_assert_eq!(found, expected, "in {}", show(&joined));
    }
}

/// docs/reader.md "Robustness": no recursion on input depth, so deep nesting cannot overflow.
#[test]
fn deep_nesting_neither_overflows_nor_loses_text() {
    let depth = 1_000_000;
    let open = b"(".repeat(depth);
    let closed = [&open[..], &b")".repeat(depth)[..]].concat();
    let progns = [&b"(progn ".repeat(50_000)[..], &b")".repeat(50_000)[..]].concat();
    let unclosed_progns = b"(progn \n".repeat(50_000);
    for input in [&open, &closed, &progns, &unclosed_progns] {
        if let Err(e) = check_all(input) {
            panic!("{e} (input of {} bytes)", input.len());
        }
    }
    assert!(scan(&closed).diagnostics.is_empty());
    assert_eq!(scan(&closed).items.len(), 1);
}

/// `#1+sbcl`: SBCL ignores the numeric argument (with a warning) and so does the scanner;
/// the conditional's span then starts `#1+` (found by the fuzzer, fuzz/regressions/).
#[test]
fn conditional_with_numeric_argument() {
    let input = b"#1+sbcl (f) #1+\xff";
    check_all(input).unwrap();
    let s = scan(input);
    let forms: Vec<&Item> = non_ws(&s);
    assert_eq!(forms[0].conditionals, vec![Span::new(0, 7)]);
}

/// `#2| ... |#` is a block comment (SBCL ignores the argument with a warning), also inside
/// a list and in the match table of recovery: its bars are not multiple escapes. Found by
/// `invariants_hold_on_lisp_like_soup` (diagnostic at 11 attached to the item at 12..13).
#[test]
fn numeric_block_comment_is_a_comment_everywhere() {
    check_all(b"(\n()#2|\\|#||(").unwrap();
    let input = b"(a #2| x | y |# b)\n(c)\n";
    check_all(input).unwrap();
    let s = scan(input);
    assert!(s.diagnostics.is_empty(), "{:?}", s.diagnostics);
    let spans: Vec<Span> = non_ws(&s).iter().map(|i| i.span).collect();
    assert_eq!(spans, vec![Span::new(0, 18), Span::new(19, 22)]);
}

/// `#|`, or `#n|` with a numeric argument (which SBCL ignores).
fn is_block_comment_opening(text: &[u8]) -> bool {
    let digits = text
        .iter()
        .skip(1)
        .take_while(|c| c.is_ascii_digit())
        .count();
    text.first() == Some(&b'#') && text.get(1 + digits) == Some(&b'|')
}

/// Every lexer reads what follows `#` alike: `#;` and `#"` consume their dispatch
/// character (as SBCL does), `#<...>` runs to its `>`. The recovery cut of `#;(` once
/// landed before the form's own list (found by the fuzzer,
/// fuzz/regressions/hash-semicolon-recovery-minimized).
#[test]
fn dispatch_characters_are_lexed_alike_everywhere() {
    for input in [
        &b"#;(\n("[..],
        b"#\"(\n(",
        b"#+#<a ;b> (foo\n(bar)",
        b"(x #;(y)\n(z)",
        b"(list #<obj ( x> 1)\n(c)",
        // After a dispatch prefix a new token starts: `#` there dispatches again
        // (fuzz/regressions/prefix-then-hash-minimized).
        b"#+#;d(\n(",
        b"#+#|x|# (a\n(b)",
        b"(f #'#|(|# g)\n(h)",
    ] {
        check_all(input).unwrap();
    }
    let s = scan(b"#;(\n(");
    let forms: Vec<&Item> = non_ws(&s);
    assert_eq!(forms[0].span, Span::new(0, 3));
    assert_eq!(forms[0].core, 2);
}

// ----------------------------------------------------------------------------------------
// The collapsed view reads as Lisp
// ----------------------------------------------------------------------------------------

/// Operators of every kind of entry: definers with each key, containers, the generic rule,
/// plain operators, forms shown whole.
const HEADS: &[&str] = &[
    "defun",
    "defmethod",
    "defclass",
    "defstruct",
    "defvar",
    "defpackage",
    "in-package",
    "defsystem",
    "define-foo",
    "defwidget",
    "progn",
    "eval-when",
    "let",
    "with-upgradability",
    "test",
    "def-suite",
    "defcfun",
    "->",
    "setf",
    "declaim",
    "define-presentation-method",
];

/// A top-level form headed by one of [`HEADS`], its elements well-formed data.
fn headed_form() -> impl Strategy<Value = Vec<u8>> {
    (select(HEADS), vec((datum(), select(SEPARATORS)), 0..6)).prop_map(|(head, elements)| {
        let mut v = format!("({head}").into_bytes();
        for (e, sep) in elements {
            v.extend_from_slice(sep);
            if sep.is_empty() || matches!(e.first(), Some(b')')) {
                v.push(b' ');
            }
            v.extend_from_slice(&e);
        }
        v.push(b')');
        v
    })
}

fn headed_file() -> impl Strategy<Value = Vec<u8>> {
    vec(headed_form(), 1..6).prop_map(|forms| forms.join(&b"\n"[..]))
}

/// Where Lisp text leaves the reader: open lists, inside a string, `|...|` or `#|...|#`.
#[derive(Default, Debug)]
struct Reader {
    depth: i64,
    string: bool,
    bar: bool,
    block: usize,
}

impl Reader {
    /// Reads one view line (a `;` comment runs to its end); false on a `)` too many.
    fn line(&mut self, text: &str) -> bool {
        let b = text.as_bytes();
        let mut i = 0;
        // Where the last escaped character is (`\ ` is no delimiter).
        let mut escaped = usize::MAX;
        while i < b.len() {
            let c = b[i];
            let after_delimiter = i == 0
                || (matches!(
                    b[i - 1],
                    b' ' | b'\t' | b'\x0c' | b'(' | b')' | b'\'' | b'`' | b',' | b'"'
                ) && escaped != i - 1)
                || (i >= 2 && matches!(&b[i - 2..i], b",@" | b",."));
            // After a dispatch prefix (`#+`, `#.`) a datum starts too.
            let token_start = after_delimiter || after_dispatch_prefix(b, i, escaped);
            // `#"` and `#;` at the start of a token: dispatch characters, no string or
            // comment (docs/decisions.md#unknown-dispatch-characters-prefix-the-next-datum).
            if c == b'#' && token_start && !self.string && !self.bar && self.block == 0 {
                let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
                if matches!(b.get(i + 1 + digits), Some(b'"' | b';')) {
                    i += 2 + digits;
                    continue;
                }
            }
            if self.block > 0 {
                if b[i..].starts_with(b"|#") {
                    self.block -= 1;
                    i += 1;
                } else if b[i..].starts_with(b"#|") {
                    self.block += 1;
                    i += 1;
                }
            } else if c == b'\\' {
                i += 1;
                escaped = i;
            } else if self.string {
                self.string = c != b'"';
            } else if self.bar {
                self.bar = c != b'|';
            } else if c == b'#' && b.get(i + 1) == Some(&b'|') && after_delimiter {
                self.block = 1;
                i += 1;
            } else {
                match c {
                    b'"' => self.string = true,
                    b'|' => self.bar = true,
                    b';' => return true,
                    b'(' => self.depth += 1,
                    b')' => self.depth -= 1,
                    _ => {}
                }
                if self.depth < 0 {
                    return false;
                }
            }
            i += 1;
        }
        true
    }

    fn closed(&self) -> bool {
        self.depth == 0 && !self.string && !self.bar && self.block == 0
    }
}

/// Whether `b[..i]` ends with a dispatch prefix `#`, digits, a character (`#+`, `#1=`).
fn after_dispatch_prefix(b: &[u8], i: usize, escaped: usize) -> bool {
    if i < 2 || b[i - 1] == b'\\' || escaped == i - 1 {
        return false;
    }
    let digits = b[..i - 1]
        .iter()
        .rev()
        .take_while(|c| c.is_ascii_digit())
        .count();
    let hash = i - 1 - digits;
    hash >= 1 && b[hash - 1] == b'#' && escaped != hash - 1
}

/// Every entry of the collapsed view (a form's line, or a container's head, children and
/// closing `)`) is balanced Lisp once its `;;` comment is dropped: `...` stands for what is
/// left out, and nothing shown is a `)` the reader would not expect.
fn check_collapsed_lines(input: &[u8]) -> Result<(), TestCaseError> {
    // Bytes the guard refuses (a NUL byte in an edit) have no view.
    let Ok(file) =
        lisp_read_file::guard::Guard::unconfined(u64::MAX).check_bytes("f.lisp", input.to_vec())
    else {
        return Ok(());
    };
    let mut request = lisp_read_file::tool::ReadRequest::new("f.lisp");
    request.limit = usize::MAX;
    let view = lisp_read_file::tool::read_loaded(file, grammar(), &request, Some(true)).unwrap();
    // A string, `#|` or `|` that never ends makes the rest of the file one token: what it
    // means then depends on how the reader would have read the broken text.
    use lisp_read_file::scan::DiagnosticKind::*;
    if view.meta.diagnostics.iter().any(|d| {
        matches!(
            d.kind,
            UnterminatedString | UnterminatedComment | UnterminatedEscape
        )
    }) {
        return Ok(());
    }
    let mut reader = Reader::default();
    let mut entry = String::new();
    for line in view.content.lines() {
        let Some((number, text)) = line.split_once(": ") else {
            continue; // a note
        };
        if number.trim_start() == "1" && text.starts_with("#!") {
            continue; // a shebang
        }
        entry.push_str(text);
        entry.push('\n');
        prop_assert!(
            reader.line(text),
            "a ) too many in {entry:?} of {}\n{}",
            show(input),
            view.content
        );
        if reader.closed() {
            entry.clear();
        }
    }
    prop_assert!(
        reader.closed(),
        "unbalanced entry {entry:?} ({reader:?}) in the view of {}:\n{}",
        show(input),
        view.content
    );
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn collapsed_lines_are_balanced_on_definitions(input in headed_file()) {
        check_collapsed_lines(&input)?;
    }

    #[test]
    fn collapsed_lines_are_balanced_on_generated_lisp(file in balanced(true)) {
        check_collapsed_lines(&file.text)?;
    }
}
