//! The definitions of one file: every classified form with a name (top-level, or a child
//! of a container such as `progn`), filtered by the request's name, pattern and kinds.

use super::macros::{self, Outcome};
use super::{cursor::Cursor, derived, signature, Definition, FileAnswer, Search, Target};
use crate::cancel::CancelToken;
use crate::grammar::Grammar;
use crate::guard::LoadedFile;
use crate::model::expand::{Budget, Locals};
use crate::outline::{Form, OutlineItem};
use std::ops::ControlFlow;

pub(crate) fn in_file(
    file: &LoadedFile,
    grammar: &Grammar,
    search: &Search,
    cancel: &CancelToken,
) -> FileAnswer {
    let b = &file.bytes;
    // With a prefilter, only the forms holding one of its matches can be definitions
    // wanted (the name is inside its form): the others are only scanned.
    let hay = super::literal::Haystack::new(b);
    let mut hits = search
        .widened
        .as_ref()
        .or(search.prefilter.as_ref())
        .map(|f| f.in_forms(&hay));
    if hits.as_mut().is_some_and(|h| h.first_from(0).is_none()) {
        return FileAnswer::definitions(Vec::new(), false);
    }
    let mut found = Vec::new();
    let mut structures = Vec::new();
    let mut cursor = Cursor::new(b);
    let mut over = false;
    // The expansions of learned macros' calls: linear in the file whatever the macros.
    let mut budget = Budget::for_file(b.len());
    let learned = !search.macros.is_empty()
        || memchr::memmem::find(b, b"macrolet").is_some()
        || memchr::memmem::find(b, b"MACROLET").is_some()
        || search.read_time;
    search.each_form_read(
        b,
        grammar,
        &mut |item| {
            if cancel.is_cancelled() {
                return ControlFlow::Break(());
            }
            let Some(hits) = &mut hits else {
                return ControlFlow::Continue(true);
            };
            match hits.first_from(item.span.start) {
                None => ControlFlow::Break(()),
                Some(h) => ControlFlow::Continue(h < item.span.end),
            }
        },
        &mut |_, item| {
            // Pre-order: a container, then its children (depth bounded by the outline),
            // each with the length of `locals` (the `macrolet` macros around it).
            let mut locals: Locals = Vec::new();
            let mut stack = vec![(item, 0usize)];
            while let Some((item, mark)) = stack.pop() {
                locals.truncate(mark);
                // Read by the reader: the top-level walk and `children_read` left out the
                // others.
                let Some(form) = &item.form else { continue };
                let made = if search.read_time {
                    let f = &mut found;
                    let g = grammar;
                    macros::of_read_time(
                        file,
                        &mut cursor,
                        item,
                        form,
                        g,
                        search,
                        &mut budget,
                        f,
                        &mut structures,
                    )
                } else {
                    Outcome::NotMade
                };
                let made = if !matches!(made, Outcome::NotMade) {
                    made
                } else if learned {
                    let f = &mut found;
                    macros::of_call(
                        file,
                        &mut cursor,
                        item,
                        form,
                        grammar,
                        search,
                        &locals,
                        &mut budget,
                        f,
                        &mut structures,
                    )
                } else {
                    Outcome::NotMade
                };
                if matches!(made, Outcome::Over) {
                    over = true;
                    return ControlFlow::Break(());
                }
                // An instantiated call's definitions replace the generic `def...` rule's.
                let instantiated = matches!(made, Outcome::Made);
                if let Some(name) = wanted(form, search).filter(|_| !instantiated) {
                    if !search.collect(1) {
                        over = true;
                        return ControlFlow::Break(());
                    }
                    found.push(definition(file, &mut cursor, item, form, name, search));
                }
                let (cursor, found, structures) = (&mut cursor, &mut found, &mut structures);
                if !derived::of_form(file, cursor, item, form, search, found, structures) {
                    over = true;
                    return ControlFlow::Break(());
                }
                if learned {
                    let bound = macros::locals_of(file, item, form, search, &locals, &mut budget);
                    locals.extend(bound);
                }
                let mark = locals.len();
                stack.extend(
                    search
                        .children_read(b, item)
                        .into_iter()
                        .rev()
                        .map(|c| (c, mark)),
                );
            }
            ControlFlow::Continue(())
        },
    );
    let mut answer = FileAnswer::definitions(found, over);
    answer.structures = structures;
    answer.expansions_cut = budget.ran_short;
    answer
}

/// The name to show when `form` is a definition the search wants.
fn wanted(form: &Form, search: &Search) -> Option<String> {
    let name = form.name.as_deref()?;
    if !search.kind_wanted(form.operator.as_deref()) {
        return None;
    }
    // The method key (`area :around (shape)`) makes the form's text: only for methods.
    let key = || form.is_method().then(|| form.method_key()).flatten();
    let shown = || key().unwrap_or_else(|| name.to_string());
    match &search.target {
        Target::Name(query) => query.matches_name(name).then(shown),
        Target::Pattern(p) => {
            if p.is_match(name) {
                return Some(shown());
            }
            key().filter(|k| p.is_match(k))
        }
        Target::Symbol(_) | Target::Text | Target::Callers(_) | Target::Callees(_) => None,
    }
}

fn definition(
    file: &LoadedFile,
    cursor: &mut Cursor,
    item: &OutlineItem,
    form: &Form,
    name: String,
    search: &Search,
) -> Definition {
    let (line, column) = cursor.position(item.start, Some(item.start_line));
    let body = search
        .include_body
        .then(|| String::from_utf8_lossy(&file.bytes[item.start..item.end]).into_owned());
    Definition {
        file: super::shown_file(&file.display_path),
        line,
        end_line: item.end_line,
        column,
        kind: form.operator.as_deref().unwrap_or_default().to_lowercase(),
        name,
        signature: signature(form),
        body,
        form: None,
        via: None,
        package: None,
        package_unresolved: false,
        exports: None,
        site: super::Site {
            at: item.start,
            ..super::Site::default()
        },
    }
}
