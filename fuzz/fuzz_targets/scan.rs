//! Fuzz target for the scanner and the outline (docs/reader.md).
//!
//! For arbitrary bytes it checks: no panic (1), lossless cover (2), line numbers (3),
//! the core and conditionals of forms (5), and that the outline's items are the scan's
//! non-whitespace items with children inside their parents (7).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use lisp_read_file::grammar::Grammar;
use lisp_read_file::outline::{outline, OutlineItem};
use lisp_read_file::scan::{scan, ItemKind};

fn grammar() -> &'static Grammar {
    static GRAMMAR: OnceLock<Grammar> = OnceLock::new();
    GRAMMAR.get_or_init(Grammar::builtin)
}

/// 1 + the number of newlines in `data[..offset]`.
fn line_at(newlines_before: &[usize], offset: usize) -> usize {
    1 + newlines_before[offset]
}

/// `#+` or `#-`, allowing the ignored numeric argument SBCL accepts (`#1+sbcl`, with a
/// warning): the scanner records such conditionals too (fuzz/regressions/conditional-*).
fn is_conditional(t: &[u8]) -> bool {
    let digits = t.iter().skip(1).take_while(|b| b.is_ascii_digit()).count();
    t.first() == Some(&b'#') && matches!(t.get(1 + digits), Some(b'+' | b'-'))
}

fn check_children(nl: &[usize], parent: &OutlineItem) {
    let Some(form) = &parent.form else { return };
    let mut previous_end = parent.start;
    for child in &form.children {
        assert!(
            parent.start <= child.start && child.start < child.end && child.end <= parent.end,
            "child {}..{} outside parent {}..{}",
            child.start,
            child.end,
            parent.start,
            parent.end
        );
        assert!(
            child.start >= previous_end,
            "children overlap or are out of order"
        );
        previous_end = child.end;
        assert_eq!(
            child.start_line,
            line_at(nl, child.start),
            "child start_line"
        );
        assert_eq!(child.end_line, line_at(nl, child.end - 1), "child end_line");
        check_children(nl, child);
    }
}

fuzz_target!(|data: &[u8]| {
    let s = scan(data);

    // newlines_before[k] = number of b'\n' in data[..k].
    let mut nl = Vec::with_capacity(data.len() + 1);
    let mut count = 0;
    nl.push(0);
    for &b in data {
        if b == b'\n' {
            count += 1;
        }
        nl.push(count);
    }

    // 2: lossless cover.
    let mut pos = 0;
    for (k, item) in s.items.iter().enumerate() {
        assert_eq!(
            item.span.start, pos,
            "item {k} does not start where the previous ended"
        );
        assert!(item.span.start < item.span.end, "item {k} is empty");
        pos = item.span.end;

        // 3: lines.
        assert!(
            item.start_line <= item.end_line,
            "item {k}: start_line > end_line"
        );
        assert_eq!(
            item.start_line,
            line_at(&nl, item.span.start),
            "item {k}: start_line"
        );
        assert_eq!(
            item.end_line,
            line_at(&nl, item.span.end - 1),
            "item {k}: end_line"
        );

        // 5: forms.
        if item.kind == ItemKind::Form {
            assert!(
                item.span.start <= item.core && item.core < item.span.end,
                "item {k}: core {} outside {}..{}",
                item.core,
                item.span.start,
                item.span.end
            );
            for c in &item.conditionals {
                assert!(
                    item.span.start <= c.start && c.start < c.end && c.end <= item.span.end,
                    "item {k}: conditional {}..{} outside the item",
                    c.start,
                    c.end
                );
                assert!(
                    is_conditional(&data[c.start..c.end]),
                    "item {k}: conditional does not start with #+ or #-"
                );
            }
        }
    }
    assert_eq!(pos, data.len(), "items do not reach the end of the input");
    for d in &s.diagnostics {
        assert!(d.item < s.items.len(), "diagnostic item index out of range");
        assert!(d.offset < data.len(), "diagnostic offset out of range");
    }

    // 7: outline.
    let o = outline(data, &s, grammar());
    let non_ws: Vec<_> = s
        .items
        .iter()
        .filter(|i| i.kind != ItemKind::Whitespace)
        .collect();
    assert_eq!(o.items.len(), non_ws.len(), "outline item count");
    for (oi, si) in o.items.iter().zip(&non_ws) {
        assert_eq!(
            (oi.start, oi.end),
            (si.span.start, si.span.end),
            "outline span"
        );
        assert_eq!(oi.kind, si.kind, "outline kind");
        assert_eq!((oi.start_line, oi.end_line), (si.start_line, si.end_line));
        check_children(&nl, oi);
    }
});
