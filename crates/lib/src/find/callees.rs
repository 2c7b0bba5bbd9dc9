//! The callees of a definition (docs/find.md#callees): for each definition named NAME in
//! the scope, what its code calls ([`super::calls`]), split into the definitions of the
//! scope it calls (with their file and line) and the names it calls that the scope does
//! not define (Common Lisp's own symbols left out).
//!
//! Every file is read (the callees are not known before NAME's code is): each gives the
//! names it defines (an index: forms and the names they derive) and, for the definitions
//! named NAME, their calls. [`resolve`] joins them once every file is searched.

use super::callers::{attribute, uses_of};
use super::calls::{calls_in, token_name, Call};
use super::{cursor::Cursor, signature, FileAnswer, Search, SymbolQuery, Use};
use crate::cancel::CancelToken;
use crate::grammar::Grammar;
use crate::guard::LoadedFile;
use crate::outline::OutlineItem;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;

/// A definition named NAME and what its code calls.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CalleesEntry {
    pub file: String,
    pub line: usize,
    pub end_line: usize,
    /// The operator as written, lowercased.
    pub kind: String,
    /// As the outline prints it (`area :around (shape)` for a method).
    pub name: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub qualifiers: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub specializers: Option<Vec<String>>,
    pub signature: String,
    /// The definitions of the scope it calls, in the order of their first call.
    pub callees: Vec<Callee>,
    /// The names it calls that the scope does not define, as first written (Common Lisp's
    /// own symbols left out).
    pub outside: Vec<String>,
}

/// A name of the scope a definition calls.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Callee {
    /// As first written in the caller (`(setf foo)` for a `setf` of a place).
    pub name: String,
    /// The calls, in the caller.
    pub calls: Vec<Use>,
    /// Its definitions in the scope (the first [`MAX_CALLEE_DEFINITIONS`]), shared by
    /// every entry that calls it: copied into each, a name defined thousands of times and
    /// called by as many definitions took their product (2.2 GB for 43,691 definitions
    /// of one name).
    pub definitions: std::sync::Arc<[CalleeDefinition]>,
}

/// Where a callee is defined.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CalleeDefinition {
    pub file: String,
    pub line: usize,
    /// The operator (or derived kind: `accessor`, `constructor` ...).
    pub kind: String,
    pub name: String,
}

/// Definitions listed per callee at most (a generic function with thousands of methods
/// would otherwise be copied into every caller's entry).
pub const MAX_CALLEE_DEFINITIONS: usize = 256;

/// A symbol as the index keys it: folded name, and whether it is a `(setf name)`.
type Key = (String, bool);

/// A call not yet resolved: its key, its name as written, where it is, and the key and
/// name of the operator without a standard shape whose argument its list is
/// ([`super::calls::Call::under`]).
pub(crate) type RawCall = (Key, String, Use, Option<(Key, String)>);

/// What one file gives a callees search.
#[derive(Default)]
pub(crate) struct FileCallees {
    /// The definitions named NAME, their calls not yet resolved.
    pub entries: Vec<(CalleesEntry, Vec<RawCall>)>,
    /// Every name the file defines.
    pub index: Vec<(Key, CalleeDefinition)>,
}

fn key_of(name: &str) -> Option<Key> {
    SymbolQuery::parse(name).map(|q| (q.name, q.setf))
}

pub(crate) fn in_file(
    file: &LoadedFile,
    grammar: &Grammar,
    search: &Search,
    query: &SymbolQuery,
    cancel: &CancelToken,
) -> FileAnswer {
    let b = &file.bytes;
    let mut answer = FileAnswer::definitions(Vec::new(), false);
    let mut found = FileCallees::default();
    let shown_file = super::shown_file(&file.display_path);
    let mut cursor = Cursor::new(b);
    let mut index_cursor = Cursor::new(b);
    let everything = |_: &[u8]| true;
    search.each_form_read(
        b,
        grammar,
        &mut |_| {
            if cancel.is_cancelled() {
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(true)
        },
        &mut |_, item| {
            let mut targets = Vec::new();
            let mut stack = vec![item];
            while let Some(unit) = stack.pop() {
                let Some(form) = &unit.form else { continue };
                stack.extend(search.children_read(b, unit).into_iter().rev());
                if !index(
                    &shown_file,
                    &mut index_cursor,
                    unit,
                    search,
                    &mut found.index,
                ) {
                    answer.over_budget = true;
                    return ControlFlow::Break(());
                }
                let is_target = form.name.as_deref().is_some_and(|n| query.matches_name(n))
                    && search.kind_wanted(form.operator.as_deref());
                if is_target {
                    targets.push(unit.start);
                }
            }
            if targets.is_empty() {
                return ControlFlow::Continue(());
            }
            let mut reads = |plus, expression: &[u8]| search.reads(plus, expression);
            let mut calls: Vec<Call> = calls_in(b, item.start, item.end, &mut reads, &everything);
            let Some(kept) = search.collect_uses(calls.len()) else {
                answer.over_budget = true;
                return ControlFlow::Break(());
            };
            // Past the budget inside this form: its first calls are answered, then stop.
            let cut = kept < calls.len();
            calls.truncate(kept);
            let uses = uses_of(&mut cursor, &calls);
            let groups = attribute(item, &calls);
            let by_start: HashMap<usize, usize> = groups
                .iter()
                .enumerate()
                .map(|(g, (u, _))| (u.start, g))
                .collect();
            for start in targets {
                let Some((unit, mine)) = by_start.get(&start).map(|&g| &groups[g]) else {
                    found
                        .entries
                        .push((entry(&shown_file, unit_at(item, start)), Vec::new()));
                    continue;
                };
                let own = own_operator(b, unit, mine, &calls);
                let raw = mine
                    .iter()
                    .filter(|&&c| Some(c) != own)
                    .map(|&c| {
                        let call = calls[c];
                        let written = String::from_utf8_lossy(&b[call.start..call.end]);
                        let shown = if call.setf {
                            format!("(setf {written})")
                        } else {
                            written.to_string()
                        };
                        let key = (token_name(&b[call.start..call.end]), call.setf);
                        let under = call.under.map(|(start, end)| {
                            let token = &b[start..end];
                            let written = String::from_utf8_lossy(token).to_string();
                            ((token_name(token), false), written)
                        });
                        (key, shown, uses[c].clone(), under)
                    })
                    .collect();
                found.entries.push((entry(&shown_file, unit), raw));
            }
            if cut {
                answer.over_budget = true;
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        },
    );
    answer.callees = found;
    answer
}

/// The unit of `item` (itself or a descendant) that starts at `start`.
/// Which of `mine` (indices into `calls`) is the operator of the definition `unit`
/// itself (its `defun`, or a project's definer macro): the form is not a call its code
/// makes, even when the scope defines the operator (SBCL's tree defines `defun`). It is
/// the unit's first call, written as its operator right after the form's `(`.
fn own_operator(b: &[u8], unit: &OutlineItem, mine: &[usize], calls: &[Call]) -> Option<usize> {
    let first = *mine.iter().min_by_key(|&&c| calls[c].start)?;
    let call = calls[first];
    let operator = unit.form.as_ref()?.operator.as_deref()?;
    let written = b.get(call.start..call.end)?;
    let after_paren = b[unit.start..call.start].trim_ascii_end().ends_with(b"(");
    (after_paren && !call.setf && written.eq_ignore_ascii_case(operator.as_bytes()))
        .then_some(first)
}

fn unit_at<'i, 'a>(item: &'i OutlineItem<'a>, start: usize) -> &'i OutlineItem<'a> {
    let mut stack = vec![item];
    while let Some(unit) = stack.pop() {
        if unit.start == start {
            return unit;
        }
        if let Some(form) = &unit.form {
            stack.extend(form.children.iter());
        }
    }
    item
}

/// Adds the names `unit` defines (itself and the names it derives) to `index`. False
/// once the collection budget is spent.
fn index(
    file: &str,
    cursor: &mut Cursor,
    unit: &OutlineItem,
    search: &Search,
    index: &mut Vec<(Key, CalleeDefinition)>,
) -> bool {
    let Some(form) = &unit.form else { return true };
    let kind = form.operator.as_deref().unwrap_or_default().to_lowercase();
    if let Some((name, key)) = form.name.as_deref().and_then(|n| Some((n, key_of(n)?))) {
        if !search.collect(1) {
            return false;
        }
        index.push((
            key,
            CalleeDefinition {
                file: file.to_string(),
                line: unit.start_line,
                kind: kind.clone(),
                name: name.to_string(),
            },
        ));
    }
    if form.entry().and_then(|e| e.derives).is_none() {
        return true;
    }
    let mut derived = crate::model::derived::derive_read(form, &|plus, expression| {
        search.reads(plus, expression)
    })
    .derived;
    derived.sort_by_key(|d| d.start);
    cursor.position(unit.start, Some(unit.start_line));
    for d in derived {
        let Some(key) = key_of(&d.name) else { continue };
        if !search.collect(1) {
            return false;
        }
        let (line, _) = cursor.position(d.start, None);
        index.push((
            key,
            CalleeDefinition {
                file: file.to_string(),
                line,
                kind: d.kind.to_string(),
                name: d.key.unwrap_or(d.name),
            },
        ));
    }
    true
}

fn entry(file: &str, unit: &OutlineItem) -> CalleesEntry {
    let form = unit.form.as_ref().expect("a target is a form");
    let method = form.is_method();
    let name = form.name.as_deref().unwrap_or_default();
    CalleesEntry {
        file: file.to_string(),
        line: unit.start_line,
        end_line: unit.end_line,
        kind: form.operator.as_deref().unwrap_or_default().to_lowercase(),
        name: form
            .method_key()
            .filter(|_| method)
            .unwrap_or_else(|| name.to_string()),
        qualifiers: if method {
            form.qualifiers().to_vec()
        } else {
            Vec::new()
        },
        specializers: if method {
            form.specializers().map(<[String]>::to_vec)
        } else {
            None
        },
        signature: signature(form),
        callees: Vec::new(),
        outside: Vec::new(),
    }
}

/// Whether a call written `written` (folded name `name`) is of Common Lisp's own symbol.
fn is_common_lisp(written: &str, name: &str) -> bool {
    // Calls of Common Lisp's own symbols are not listed as outside the scope.
    if !crate::model::is_common_lisp_symbol(name) {
        return false;
    }
    let symbol = written.strip_prefix("(setf ").unwrap_or(written);
    match super::split_symbol(symbol).0.as_deref() {
        None => true,
        Some(package) => matches!(package, "cl" | "common-lisp"),
    }
}

/// Whether the operator `written` (key `key`) is known to take forms as arguments:
/// Common Lisp's own (its macros without a standard shape take forms too) or a function
/// of the scope. A name outside the scope at the head of a list in the arguments of any
/// other operator (a macro, or one the scope does not define) may be a binding's or
/// data's, not a call (docs/find.md#callees): it is not listed.
/// `functions`: the keys of the scope defined other than by a `defmacro`.
fn known_function(functions: &HashSet<&Key>, key: &Key, written: &str) -> bool {
    is_common_lisp(written, &key.0) || functions.contains(key)
}

/// The entries with their calls resolved against the index of every file.
pub(crate) fn resolve(found: Vec<FileCallees>) -> Vec<CalleesEntry> {
    let mut index: HashMap<Key, Vec<CalleeDefinition>> = HashMap::new();
    let mut entries = Vec::new();
    for file in found {
        for (key, definition) in file.index {
            index.entry(key).or_default().push(definition);
        }
        entries.extend(file.entries);
    }
    // Each name's definitions, listed once for all its callers.
    let listed: HashMap<&Key, std::sync::Arc<[CalleeDefinition]>> = index
        .iter()
        .map(|(key, ds)| {
            (
                key,
                ds.iter().take(MAX_CALLEE_DEFINITIONS).cloned().collect(),
            )
        })
        .collect();
    // Found once: a name defined thousands of times and called under thousands of
    // undefined operators would otherwise have its definitions scanned at each call.
    let functions: HashSet<&Key> = index
        .iter()
        .filter(|(_, ds)| ds.iter().any(|d| !d.kind.ends_with("defmacro")))
        .map(|(key, _)| key)
        .collect();
    entries
        .into_iter()
        .map(|(mut entry, raw)| {
            let mut slot: HashMap<Key, usize> = HashMap::new();
            let mut outside: HashSet<Key> = HashSet::new();
            for (key, written, at, under) in raw {
                if let Some(&k) = slot.get(&key) {
                    entry.callees[k].calls.push(at);
                } else if let Some(definitions) = listed.get(&key) {
                    slot.insert(key, entry.callees.len());
                    entry.callees.push(Callee {
                        name: written,
                        calls: vec![at],
                        definitions: definitions.clone(),
                    });
                } else if !is_common_lisp(&written, &key.0)
                    && under.is_none_or(|(k, w)| known_function(&functions, &k, &w))
                    && outside.insert(key)
                {
                    entry.outside.push(written);
                }
            }
            entry
        })
        .collect()
}
