//! Derived definitions in a search (docs/find.md#derived-definitions): the names a form
//! makes without spelling them as its name ([`crate::model::derived`]), matched against
//! the request like any definition and reported at the slot or option that makes them,
//! with the form that makes them.
//!
//! A structure's accessors for the slots it `:include`s need the parent, which may be in
//! another file: each file keeps its structures, and [`add_included`] adds those
//! accessors once every file is searched.

use super::{cursor::Cursor, DefiningForm, Definition, FileAnswer, Search, Target};
use crate::error::ToolError;
use crate::grammar::symbol_key;
use crate::guard::LoadedFile;
use crate::model::derived::{self, Derived, Structure};
use crate::outline::{Form, OutlineItem};
use std::ops::ControlFlow;

/// A structure of a searched file, and the entry its included accessors would make.
pub(crate) struct FileStructure {
    pub structure: Structure,
    /// For a structure with `:include`: an entry at that option, its name to be set.
    pub include_entry: Option<Definition>,
}

/// Adds the derived definitions of `form` the search wants to `found`, and the form's
/// structure to `structures`. False once the collection budget is spent.
pub(crate) fn of_form(
    file: &LoadedFile,
    cursor: &mut Cursor,
    item: &OutlineItem,
    form: &Form,
    search: &Search,
    found: &mut Vec<Definition>,
    structures: &mut Vec<FileStructure>,
) -> bool {
    if form.entry().and_then(|e| e.derives).is_none() {
        return true;
    }
    let derivation = derived::derive_read(form, &|plus, expression| search.reads(plus, expression));
    let include = derivation
        .structure
        .as_ref()
        .and_then(|s| s.include.clone());
    // The cursor only moves forward: positions in file order (a default name sits at the
    // structure's name, before the options). `None` marks the `:include` option.
    let mut places: Vec<(usize, Option<Derived>)> = derivation
        .derived
        .into_iter()
        .filter(|d| wanted(d, form, search))
        .map(|d| (d.start, Some(d)))
        .collect();
    places.extend(include.as_ref().map(|&(_, start, _)| (start, None)));
    places.sort_by_key(|(start, _)| *start);
    let mut include_entry = None;
    let mut span_lines: Option<((usize, usize), usize)> = None;
    for (start, place) in places {
        let end = place
            .as_ref()
            .map_or_else(|| include.as_ref().map_or(start, |i| i.2), |d| d.end);
        let lines = match span_lines {
            Some((span, lines)) if span == (start, end) => lines,
            _ => {
                let lines = memchr::memchr_iter(b'\n', &file.bytes[start..end]).count();
                span_lines = Some(((start, end), lines));
                lines
            }
        };
        let mut entry = entry(file, cursor, item, form, search, start);
        // Inside the form's lines (an unterminated token may run past what the scanner
        // recovered as the form).
        entry.end_line = (entry.line + lines).min(item.end_line).max(entry.line);
        let Some(d) = place else {
            include_entry = Some(entry);
            continue;
        };
        // Each entry's body is the whole form: charged by its size, so that a form
        // making many names cannot fill memory with copies of itself.
        if !search.collect(body_cost(item, search)) {
            return false;
        }
        entry.kind = d.kind.to_string();
        entry.name = d.key.unwrap_or(d.name);
        found.push(entry);
    }
    if let Some(structure) = derivation.structure {
        structures.push(FileStructure {
            structure,
            include_entry,
        });
    }
    true
}

/// With `include_body`, a derived entry costs the collection budget one entry per this
/// many bytes of its form's text, plus one.
const BODY_BYTES_PER_ENTRY: usize = 80;

fn body_cost(item: &OutlineItem, search: &Search) -> usize {
    1 + if search.include_body {
        (item.end - item.start) / BODY_BYTES_PER_ENTRY
    } else {
        0
    }
}

/// Characters of the making form's signature a derived definition repeats.
const DERIVED_SIGNATURE_CHARS: usize = 200;

/// A derived definition's signature: the making form's, cut. A structure of n slots makes
/// 2n names, and the signature of such a form lists its n slots: repeated whole in each
/// entry it made answers quadratic in the form (a 4,000-slot structure: 32 MB of JSON).
fn derived_signature(form: &Form) -> String {
    let full = form.signature();
    let cut = match full.char_indices().nth(DERIVED_SIGNATURE_CHARS) {
        Some((at, _)) => format!("{} …", &full[..at]),
        None => full.to_string(),
    };
    let conditionals = form.conditionals();
    if conditionals.is_empty() {
        cut
    } else {
        format!("{} {cut}", conditionals.join(" "))
    }
}

/// An entry at `at` inside `form`, kind and name to be set.
fn entry(
    file: &LoadedFile,
    cursor: &mut Cursor,
    item: &OutlineItem,
    form: &Form,
    search: &Search,
    at: usize,
) -> Definition {
    let (line, column) = cursor.position(at, None);
    let body = search
        .include_body
        .then(|| String::from_utf8_lossy(&file.bytes[item.start..item.end]).into_owned());
    Definition {
        file: super::shown_file(&file.display_path),
        line,
        end_line: line,
        column,
        kind: String::new(),
        name: String::new(),
        signature: derived_signature(form),
        body,
        form: Some(DefiningForm {
            line: item.start_line,
            end_line: item.end_line,
            kind: form.operator.as_deref().unwrap_or_default().to_lowercase(),
            name: form.name.as_deref().unwrap_or_default().to_string(),
        }),
        via: None,
        package: None,
        package_unresolved: false,
        exports: None,
        site: super::Site {
            at,
            ..super::Site::default()
        },
    }
}

/// Whether the search wants `d`: its name (or a method's key) matches, and `kinds`, if
/// given, names its kind or the operator of the form that makes it.
fn wanted(d: &Derived, form: &Form, search: &Search) -> bool {
    let kind_ok = search
        .kinds
        .as_ref()
        .is_none_or(|kinds| kinds.contains(d.kind) || search.kind_wanted(form.operator.as_deref()));
    kind_ok && name_wanted(&d.name, d.key.as_deref(), search)
}

pub(crate) fn name_wanted(name: &str, key: Option<&str>, search: &Search) -> bool {
    match &search.target {
        Target::Name(query) => query.matches_name(name),
        Target::Pattern(p) => p.is_match(name) || key.is_some_and(|k| p.is_match(k)),
        Target::Symbol(_) | Target::Text | Target::Callers(_) | Target::Callees(_) => false,
    }
}

/// Adds to each file's answer the accessors its structures get from the structures they
/// include, found among every structure of the scope (in walk order). Returns false when
/// the work bound of [`derived::included`] left some out.
pub(crate) fn add_included(
    answers: &mut [(String, Result<FileAnswer, ToolError>)],
    search: &Search,
) -> bool {
    let mut owners = Vec::new();
    let mut structures = Vec::new();
    for (k, (_, answer)) in answers.iter_mut().enumerate() {
        if let Ok(answer) = answer {
            for (j, s) in answer.structures.iter_mut().enumerate() {
                owners.push((k, j));
                structures.push(std::mem::replace(
                    &mut s.structure,
                    Structure {
                        name: String::new(),
                        conc: String::new(),
                        slots: Vec::new(),
                        include: None,
                        redescribed: Vec::new(),
                    },
                ));
            }
        }
    }
    let mut touched = Vec::new();
    let complete = derived::included(&structures, &mut |i, d| {
        let (k, j) = owners[i];
        let Ok(answer) = &mut answers[k].1 else {
            return ControlFlow::Continue(());
        };
        let Some(template) = &answer.structures[j].include_entry else {
            return ControlFlow::Continue(());
        };
        let operator = template.form.as_ref().map(|f| f.kind.as_str());
        let kind_ok = search.kinds.as_ref().is_none_or(|kinds| {
            kinds.contains(d.kind) || operator.is_some_and(|op| kinds.contains(&symbol_key(op)))
        });
        if !kind_ok || !name_wanted(&d.name, None, search) {
            return ControlFlow::Continue(());
        }
        let cost = 1 + template
            .body
            .as_ref()
            .map_or(0, |b| b.len() / BODY_BYTES_PER_ENTRY);
        if !search.collect(cost) {
            return ControlFlow::Break(());
        }
        let mut entry = template.clone();
        entry.kind = d.kind.to_string();
        entry.name = d.name;
        answer.definitions.push(entry);
        touched.push(k);
        ControlFlow::Continue(())
    });
    touched.dedup();
    for k in touched {
        if let Ok(answer) = &mut answers[k].1 {
            answer.definitions.sort_by_key(|d| (d.line, d.column));
        }
    }
    complete
}
