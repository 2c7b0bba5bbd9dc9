//! The callers of a symbol in one file (docs/find.md#callers): the definitions whose code
//! calls it ([`super::calls`]), each with the lines of its calls.
//!
//! As for references, the prefilter finds the name's candidates in the bytes; only the
//! top-level forms holding one are read into a tree and walked. A call is attributed to
//! the innermost definition around it (a `defun` inside a `progn`, each method of its
//! own); a call outside any is the top-level form's.

use super::calls::{calls_in, Call};
use super::through::calls_through;
use super::{cursor::Cursor, signature, FileAnswer, Search, SymbolQuery, Use};
use crate::cancel::CancelToken;
use crate::grammar::Grammar;
use crate::guard::LoadedFile;
use crate::model::expand::Budget;
use crate::outline::OutlineItem;
use serde::{Deserialize, Serialize};
use std::ops::ControlFlow;

/// A definition (or a top-level form that defines nothing) whose code calls the symbol.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Caller {
    pub file: String,
    /// 1-based lines of the definition.
    pub line: usize,
    pub end_line: usize,
    /// The operator as written, lowercased (`defun`, `defmethod`).
    pub kind: String,
    /// What it defines, as the outline prints it (`area :around (shape)` for a method);
    /// `null` for a top-level form that defines nothing.
    pub name: Option<String>,
    /// Methods: the qualifiers as written (`:around`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub qualifiers: Vec<String>,
    /// Methods: the specializer of each required parameter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub specializers: Option<Vec<String>>,
    pub signature: String,
    /// The text view's line for the definition, as a reference's: its `#+`/`#-` prefixes
    /// and `(operator name ...)` (the lambda list is not repeated: `find --name` gives
    /// it). Not serialized: `kind`, `name` and `signature` hold it.
    #[serde(skip)]
    pub heading: String,
    /// Each call: its line, column and the line's text.
    pub calls: Vec<Use>,
    /// The home package of the called symbol, folded (docs/find.md#packages): a
    /// definition calling the symbols of two packages by one name is two entries. `null`
    /// when no package is known.
    #[serde(default)]
    pub package: Option<String>,
    /// The package is defined outside the scope (or may be one that is).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub package_unresolved: bool,
}

pub(crate) fn in_file(
    file: &LoadedFile,
    grammar: &Grammar,
    search: &Search,
    query: &SymbolQuery,
    cancel: &CancelToken,
) -> FileAnswer {
    let b = &file.bytes;
    // One folded copy of the file for the symbol's search and the writers'.
    let hay = super::literal::Haystack::new(b);
    let mut hits: Vec<usize> = match &search.prefilter {
        Some(prefilter) => prefilter.starts(&hay),
        None => Vec::new(),
    };
    keep_token_hits(b, &mut hits, &query.name);
    // A form calling a macro that may write the call is read too.
    let more = search.through.hits(&hay);
    if !more.is_empty() {
        hits.extend(more);
        hits.sort_unstable();
    }
    let mut answer = FileAnswer::definitions(Vec::new(), false);
    if hits.is_empty() {
        return answer;
    }
    let mut next = 0usize;
    let mut cursor = Cursor::new(b);
    let mut budget = Budget::for_file(b.len());
    // The symbol's calls, and those of the macros that may write one.
    let wanted = |token: &[u8]| query.matches_token(token) || search.through.is_writer(token);
    search.each_form_read(
        b,
        grammar,
        &mut |item| {
            if cancel.is_cancelled() {
                return ControlFlow::Break(());
            }
            while next < hits.len() && hits[next] < item.span.start {
                next += 1;
            }
            match hits.get(next) {
                None => ControlFlow::Break(()),
                Some(&h) => ControlFlow::Continue(h < item.span.end),
            }
        },
        &mut |_, item| {
            let mut reads = |plus, expression: &[u8]| search.reads(plus, expression);
            let (direct, sites): (Vec<Call>, Vec<Call>) =
                calls_in(b, item.start, item.end, &mut reads, &wanted)
                    .into_iter()
                    .partition(|c| query.matches_token(&b[c.start..c.end]));
            let direct: Vec<Call> = direct
                .into_iter()
                .filter(|c| c.setf == query.setf)
                .collect();
            let through = calls_through(
                b,
                item.start,
                item.end,
                search,
                query,
                &direct,
                sites,
                &mut budget,
            );
            let (mut calls, mut macros) = merged(direct, through);
            if calls.is_empty() {
                return ControlFlow::Continue(());
            }
            let Some(kept) = search.collect_uses(calls.len()) else {
                answer.over_budget = true;
                return ControlFlow::Break(());
            };
            // Past the budget inside this form: its first calls are answered, then stop.
            let cut = kept < calls.len();
            calls.truncate(kept);
            macros.truncate(kept);
            let mut uses = uses_of(&mut cursor, &calls);
            // Where each call is and how it is written, for its package (`packages.rs`).
            for ((u, c), through) in uses.iter_mut().zip(&calls).zip(macros) {
                u.site.at = c.start;
                // A call through a macro: the symbol its template writes, unqualified.
                u.site.token = Some(match &through {
                    Some(_) => query.name.clone(),
                    None => String::from_utf8_lossy(&b[c.start..c.end]).into_owned(),
                });
                u.through = through;
            }
            for (unit, calls) in attribute(item, &calls) {
                let Some(form) = &unit.form else { continue };
                if search.kind_wanted(form.operator.as_deref()) {
                    let uses = calls.iter().map(|&c| uses[c].clone()).collect();
                    answer.callers.push(caller(file, unit, uses));
                }
            }
            if cut {
                answer.over_budget = true;
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        },
    );
    // Calls through macros past the file's budget were not looked for: the answer says so.
    answer.expansions_cut = budget.ran_short;
    answer
}

/// Drops the `hits` of `name` (its matches' starts) that are inside a longer token
/// (`node` in `node-lvar` or `*current-node*`): no form holding only those can call it,
/// and a third of the forms holding `node` in SBCL's sources are not read. A hit is kept
/// when a byte next to it may end a token or escape one (`(`, `'`, `:`, `|`, `\`, `#`,
/// a non-ASCII byte ...); only for a name made of such plain bytes (else every hit is
/// kept), so a match hidden inside an earlier one (leftmost-first, not overlapping)
/// would have been dropped too.
fn keep_token_hits(b: &[u8], hits: &mut Vec<usize>, name: &str) {
    let n = name.as_bytes();
    if n.is_empty() || !n.iter().all(|&c| plain_constituent(c)) {
        return;
    }
    hits.retain(|&h| {
        let before = h.checked_sub(1).map(|k| b[k]);
        let after = b.get(h + n.len()).copied();
        !before.is_some_and(plain_constituent) && !after.is_some_and(plain_constituent)
    });
}

/// A byte that only continues a token: neither whitespace, a macro character, a package
/// marker, an escape nor part of a non-ASCII character.
fn plain_constituent(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"-*+/<>=!?%$&^~._[]{}".contains(&c)
}

/// The calls a form spells and those its macro calls write (at the macro call), in
/// source order, with the macro of each of the latter.
fn merged(direct: Vec<Call>, through: Vec<(Call, String)>) -> (Vec<Call>, Vec<Option<String>>) {
    let mut all: Vec<(Call, Option<String>)> = direct.into_iter().map(|c| (c, None)).collect();
    all.extend(through.into_iter().map(|(c, m)| (c, Some(m))));
    all.sort_by_key(|(c, _)| c.start);
    all.into_iter().unzip()
}

/// The calls grouped by the innermost definition holding each (`item` itself for those
/// outside any), in file order. Linear: the definitions are visited in pre-order with a
/// stack of those open at the current call.
pub(crate) fn attribute<'i, 'a>(
    item: &'i OutlineItem<'a>,
    calls: &[Call],
) -> Vec<(&'i OutlineItem<'a>, Vec<usize>)> {
    let mut units: Vec<&OutlineItem> = Vec::new();
    let mut stack = vec![item];
    while let Some(unit) = stack.pop() {
        units.push(unit);
        if let Some(form) = &unit.form {
            stack.extend(form.children.iter().rev());
        }
    }
    // A unit that defines nothing (a `setf` inside a `progn`) gives its calls to the
    // definition around it.
    let named = |u: &OutlineItem| u.form.as_ref().is_some_and(|f| f.name.is_some());
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut group_of: Vec<Option<usize>> = vec![None; units.len()];
    let mut open: Vec<usize> = vec![0];
    let mut k = 1;
    for (c, call) in calls.iter().enumerate() {
        while k < units.len() && units[k].start <= call.start {
            while open.len() > 1 && units[*open.last().unwrap_or(&0)].end <= units[k].start {
                open.pop();
            }
            if named(units[k]) {
                open.push(k);
            }
            k += 1;
        }
        while open.len() > 1 && units[*open.last().unwrap_or(&0)].end <= call.start {
            open.pop();
        }
        let unit = *open.last().unwrap_or(&0);
        match group_of[unit] {
            Some(g) => groups[g].1.push(c),
            None => {
                group_of[unit] = Some(groups.len());
                groups.push((unit, vec![c]));
            }
        }
    }
    groups.sort_by_key(|(u, _)| units[*u].start);
    groups.into_iter().map(|(u, c)| (units[u], c)).collect()
}

/// The line, column and line text of each call (in file order).
pub(crate) fn uses_of(cursor: &mut Cursor, calls: &[Call]) -> Vec<Use> {
    let mut shown: Vec<Use> = Vec::with_capacity(calls.len());
    for call in calls {
        let (line, column) = cursor.position(call.start, None);
        let text = match shown.last() {
            Some(last) if last.line == line => last.text.clone(),
            _ => cursor.line_text(),
        };
        shown.push(Use {
            line,
            column,
            text,
            through: None,
            site: super::Site::default(),
        });
    }
    shown
}

fn caller(file: &LoadedFile, unit: &OutlineItem, calls: Vec<Use>) -> Caller {
    let form = unit.form.as_ref().expect("a unit is a form");
    let method = form.is_method();
    Caller {
        file: super::shown_file(&file.display_path),
        line: unit.start_line,
        end_line: unit.end_line,
        kind: form.operator.as_deref().unwrap_or_default().to_lowercase(),
        name: form.name.as_deref().map(|n| {
            form.method_key()
                .filter(|_| method)
                .unwrap_or_else(|| n.to_string())
        }),
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
        heading: super::heading(form),
        calls,
        package: None,
        package_unresolved: false,
    }
}

#[cfg(test)]
mod tests {
    use super::keep_token_hits;

    fn kept(text: &str, name: &str) -> Vec<usize> {
        let mut hits: Vec<usize> = text.match_indices(name).map(|(at, _)| at).collect();
        keep_token_hits(text.as_bytes(), &mut hits, name);
        hits
    }

    #[test]
    fn hits_inside_longer_tokens_are_dropped() {
        let text = "(node-lvar x) (foo node) *node* a-node nodes";
        assert_eq!(kept(text, "node"), vec![19]);
    }

    #[test]
    fn hits_next_to_macro_characters_packages_and_escapes_are_kept() {
        let text = "sb-c::node #'node ,@node |node| no\\de`node (node)";
        let all: Vec<usize> = text.match_indices("node").map(|(at, _)| at).collect();
        assert_eq!(kept(text, "node"), all);
        // A name that is not plain keeps every hit.
        assert_eq!(kept("a|b c|d", "b c"), vec![2]);
    }
}
