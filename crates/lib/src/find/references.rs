//! The uses of a symbol in one file.
//!
//! 1. The prefilter finds every place the symbol's name occurs in the bytes,
//!    case-insensitively (a file without one is done: it is never scanned).
//! 2. One scan splits the file into top-level items; only the forms holding a candidate
//!    are lexed token by token ([`crate::scan::each_token`]), from their start to their
//!    last candidate, and only those with a use are classified (for their operator, name
//!    and signature). A candidate inside a string, a comment or a feature expression is
//!    no token; a candidate inside a longer token (`foo` in `foo-bar`) is no use; a token
//!    that contains a candidate is a use when it is the symbol
//!    ([`super::SymbolQuery::matches_token`]).
//!
//! Each form is lexed at most once and the positions only move forward: linear in the
//! file whatever the number of candidates.

use super::{cursor::Cursor, FileAnswer, Search, SymbolQuery};
use crate::cancel::CancelToken;
use crate::grammar::Grammar;
use crate::guard::LoadedFile;
use crate::outline::OutlineItem;
use crate::scan::each_token_read;
use std::cell::{Cell, RefCell};
use std::ops::ControlFlow;

pub(crate) fn in_file(
    file: &LoadedFile,
    grammar: &Grammar,
    search: &Search,
    query: &SymbolQuery,
    cancel: &CancelToken,
) -> FileAnswer {
    let b = &file.bytes;
    let hits: Vec<usize> = match &search.prefilter {
        Some(prefilter) => prefilter.starts(&super::literal::Haystack::new(b)),
        None => Vec::new(),
    };
    if hits.is_empty() {
        return FileAnswer::references(Vec::new(), false);
    }
    let next = Cell::new(0usize);
    let skip_before = |at: usize| {
        let mut h = next.get();
        while h < hits.len() && hits[h] < at {
            h += 1;
        }
        next.set(h);
    };
    let mut found = Vec::new();
    let mut cursor = Cursor::new(b);
    let mut over = false;
    // The uses of the form being looked at: found by lexing before the form is
    // classified, so that a form whose candidates are all in strings, comments or longer
    // tokens is never classified.
    let uses: RefCell<Vec<(usize, usize)>> = RefCell::new(Vec::new());
    search.each_form_read(
        b,
        grammar,
        &mut |item| {
            if cancel.is_cancelled() {
                return ControlFlow::Break(());
            }
            let (start, end) = (item.span.start, item.span.end);
            skip_before(start);
            match hits.get(next.get()) {
                None => return ControlFlow::Break(()),
                Some(&h) if h >= end => return ControlFlow::Continue(false),
                Some(_) => {}
            }
            let mut uses = uses.borrow_mut();
            uses.clear();
            // Lexed from the form's start up to its last candidate, not further.
            let mut reads = |plus, expression: &[u8]| search.reads(plus, expression);
            each_token_read(b, start, end, &mut reads, &mut |s, e| {
                skip_before(s);
                match hits.get(next.get()) {
                    Some(&h) if h < end => {
                        if h < e && query.matches_token(&b[s..e]) {
                            uses.push((s, e));
                        }
                        ControlFlow::Continue(())
                    }
                    _ => ControlFlow::Break(()),
                }
            });
            skip_before(end);
            ControlFlow::Continue(!uses.is_empty())
        },
        &mut |_, item| {
            let Some(form) = &item.form else {
                return ControlFlow::Continue(());
            };
            if !search.kind_wanted(form.operator.as_deref()) {
                return ControlFlow::Continue(());
            }
            let uses = uses.borrow();
            let Some(kept) = search.collect_uses(uses.len()) else {
                over = true;
                return ControlFlow::Break(());
            };
            let defines = |item: &OutlineItem| defines(item, query);
            found.extend(super::entries_of(
                file,
                &mut cursor,
                item,
                &uses[..kept],
                &defines,
                grammar,
            ));
            if kept < uses.len() {
                over = true;
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        },
    );
    FileAnswer::references(found, over)
}

/// Whether the form, or a child of it (containers), defines the symbol.
fn defines(item: &OutlineItem, query: &SymbolQuery) -> bool {
    let mut stack = vec![item];
    while let Some(item) = stack.pop() {
        if let Some(form) = &item.form {
            if form.name.as_deref().is_some_and(|n| query.defined_by(n)) {
                return true;
            }
            stack.extend(form.children.iter());
        }
    }
    false
}
