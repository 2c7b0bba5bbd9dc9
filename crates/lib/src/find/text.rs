//! The mentions of a literal text in one file (docs/find.md#text): the top-level forms
//! whose source text contains it, strings and comments inside them included, each with
//! the lines that hold it. Top-level comments between forms are not forms: a mention
//! there is not reported.
//!
//! The prefilter finds every occurrence in the bytes; a file without one is never
//! scanned. One scan splits the file into top-level items, and only the forms holding an
//! occurrence are classified (for their operator, name and signature). The positions
//! only move forward: linear in the file whatever the number of occurrences.

use super::{cursor::Cursor, FileAnswer, Search};
use crate::cancel::CancelToken;
use crate::grammar::Grammar;
use crate::guard::LoadedFile;
use std::cell::Cell;
use std::ops::ControlFlow;

pub(crate) fn in_file(
    file: &LoadedFile,
    grammar: &Grammar,
    search: &Search,
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
    // The first occurrence not before the form being looked at.
    let next = Cell::new(0usize);
    let in_span = |start: usize, end: usize| {
        let mut h = next.get();
        while h < hits.len() && hits[h] < start {
            h += 1;
        }
        next.set(h);
        let first = h;
        while h < hits.len() && hits[h] < end {
            h += 1;
        }
        (first, h)
    };
    let mut found = Vec::new();
    let mut cursor = Cursor::new(b);
    let mut over = false;
    // The occurrences of the form being looked at, as indices into `hits`.
    let span = Cell::new((0usize, 0usize));
    search.each_form_read(
        b,
        grammar,
        &mut |item| {
            if cancel.is_cancelled() || next.get() >= hits.len() {
                return ControlFlow::Break(());
            }
            let (first, end) = in_span(item.span.start, item.span.end);
            span.set((first, end));
            ControlFlow::Continue(first < end)
        },
        &mut |_, item| {
            let Some(form) = &item.form else {
                return ControlFlow::Continue(());
            };
            if !search.kind_wanted(form.operator.as_deref()) {
                return ControlFlow::Continue(());
            }
            let (first, end) = span.get();
            let Some(kept) = search.collect_uses(end - first) else {
                over = true;
                return ControlFlow::Break(());
            };
            let at: Vec<(usize, usize)> =
                hits[first..first + kept].iter().map(|&h| (h, h)).collect();
            found.extend(super::entries_of(
                file,
                &mut cursor,
                item,
                &at,
                &|_| false,
                grammar,
            ));
            if kept < end - first {
                over = true;
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        },
    );
    FileAnswer::references(found, over)
}
