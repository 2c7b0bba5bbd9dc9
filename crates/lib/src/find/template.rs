//! Definitions written in a `macrolet` binding's template, for the uses inside them.
//!
//! `(macrolet ((def (name) `(defoptimizer (,name derive-type) ... (foo ...)))) (def floor))`
//! defines nothing at top level: its uses of `foo` belong to the definition its template
//! writes, `(defoptimizer (,name derive-type) ...)`, not to the `macrolet`. The outline
//! lists a `macrolet`'s body forms only; this finds, for each use in its bindings, the
//! outermost list there whose operator starts with `def` (as the grammar's generic
//! definer), below the binding itself. One pass over the form's bytes, however many uses.

use super::{Reference, Use};
use crate::grammar::Grammar;
use crate::outline::OutlineItem;

/// A list in a binding's template that defines something: its span and lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TemplateForm {
    pub start: usize,
    pub end: usize,
    pub start_line: usize,
    pub end_line: usize,
}

/// An open list: where it starts, its line.
struct Open {
    start: usize,
    line: usize,
    /// Its index in `found` when a use was given to it.
    found: Option<usize>,
}

/// For each of `positions` (increasing, inside the form `b[start..end]` that starts on
/// `line`): the template definition holding it, when it is in the form's bindings (the
/// first list inside it) under a binding. The form's own `(` is at `start`.
pub(crate) fn definitions_of_uses(
    b: &[u8],
    (start, end, line): (usize, usize, usize),
    positions: &[usize],
) -> Vec<Option<TemplateForm>> {
    let end = end.min(b.len());
    let mut answer = vec![None; positions.len()];
    // Indices into `answer` per found template form, filled as lists close.
    let mut found: Vec<(TemplateForm, Vec<usize>)> = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    // Whether the bindings list (the first list at depth 1) was seen and closed.
    let mut bindings_done = false;
    let (mut k, mut line, mut next) = (start, line, 0usize);
    // Past the last use, until the lists given uses close.
    let mut open_found = 0usize;
    // The outermost defining list open, by its index in the stack: kept as lists open
    // and close, so that a use costs the same at any depth.
    let mut outer: Option<usize> = None;
    while k < end && (next < positions.len() || open_found > 0) {
        while next < positions.len() && positions[next] <= k {
            if positions[next] == k && !bindings_done {
                open_found += give(&mut stack, outer, &mut found, next);
            }
            next += 1;
        }
        match b[k] {
            b'\n' => line += 1,
            b';' => k = memchr::memchr(b'\n', &b[k..end]).map_or(end, |n| k + n) - 1,
            b'"' | b'|' => {
                let (to, lines) = closing(&b[..end], k);
                line += lines;
                k = to;
            }
            b'#' if b.get(k + 1) == Some(&b'\\') => k += 2,
            b'\\' => k += 1,
            b'(' => {
                let depth = stack.len();
                // Below a binding (the form, its bindings, a binding: depths 0 to 2).
                if outer.is_none() && depth >= 3 && operator_defines(&b[k + 1..end]) {
                    outer = Some(depth);
                }
                stack.push(Open {
                    start: k,
                    line,
                    found: None,
                });
            }
            b')' => {
                if outer == Some(stack.len().wrapping_sub(1)) {
                    outer = None;
                }
                if let Some(open) = stack.pop() {
                    if let Some(f) = open.found {
                        found[f].0.end = k + 1;
                        found[f].0.end_line = line;
                        open_found -= 1;
                    }
                    if stack.len() == 1 {
                        bindings_done = true;
                    }
                }
            }
            _ => {}
        }
        k += 1;
    }
    for (form, uses) in found {
        if form.end > form.start {
            for u in uses {
                answer[u] = Some(form);
            }
        }
    }
    answer
}

/// Gives use `index` to the outermost defining list open under a binding (`outer`, its
/// index in the stack); 1 when that list had no use before (one more to see closed).
fn give(
    stack: &mut [Open],
    outer: Option<usize>,
    found: &mut Vec<(TemplateForm, Vec<usize>)>,
    index: usize,
) -> usize {
    let Some(open) = outer.and_then(|k| stack.get_mut(k)) else {
        return 0;
    };
    let new = usize::from(open.found.is_none());
    let f = *open.found.get_or_insert_with(|| {
        found.push((
            TemplateForm {
                start: open.start,
                end: open.start,
                start_line: open.line,
                end_line: open.line,
            },
            Vec::new(),
        ));
        found.len() - 1
    });
    found[f].1.push(index);
    new
}

/// A `macrolet`'s entry (`item` its form) split by the template definitions holding its
/// uses: one entry per such definition, named and headed as the outline reads it, and
/// the `macrolet` for the uses left (none when every use went to a definition). In line
/// order; entries never overlap (a use goes to one).
pub(crate) fn split(
    entry: Reference,
    item: &OutlineItem,
    bytes: &[u8],
    grammar: &Grammar,
) -> Vec<Reference> {
    // The form's own `(`, after any `#+`/`#-` prefix: the one before its operator.
    let text = &bytes[item.start..item.end.min(bytes.len())];
    let operator = text
        .windows(8)
        .position(|w| w.eq_ignore_ascii_case(b"macrolet"));
    let Some(open) = operator.and_then(|at| memchr::memrchr(b'(', &text[..at])) else {
        return vec![entry];
    };
    let start = item.start + open;
    let line = item.start_line + memchr::memchr_iter(b'\n', &bytes[item.start..start]).count();
    let positions: Vec<usize> = entry.uses.iter().map(|u| u.site.at).collect();
    let forms = definitions_of_uses(bytes, (start, item.end, line), &positions);
    if forms.iter().all(Option::is_none) {
        return vec![entry];
    }
    let mut rest = entry.clone();
    rest.uses.clear();
    let mut out: Vec<Reference> = Vec::new();
    let mut last: Option<TemplateForm> = None;
    for (u, form) in entry.uses.into_iter().zip(forms) {
        match form {
            None => rest.uses.push(u),
            Some(f) if last == Some(f) => out.last_mut().expect("made").uses.push(u),
            Some(f) => {
                last = Some(f);
                out.push(template_entry(&rest, f, bytes, grammar, u));
            }
        }
    }
    if !rest.uses.is_empty() {
        out.push(rest);
    }
    out.sort_by_key(|r| (r.line, r.uses.first().map(|u| u.line)));
    out
}

/// The entry of a template definition with its first use: the form read by itself.
fn template_entry(
    around: &Reference,
    f: TemplateForm,
    bytes: &[u8],
    grammar: &Grammar,
    first: Use,
) -> Reference {
    let outline = crate::outline::outline_bytes(&bytes[f.start..f.end], grammar);
    let form = outline.items.iter().find_map(|i| i.form.as_ref());
    let mut entry = Reference {
        line: f.start_line,
        end_line: f.end_line,
        uses: vec![first],
        definition: false,
        ..around.clone()
    };
    if let Some(form) = form {
        entry.kind = form.operator.as_deref().unwrap_or_default().to_lowercase();
        entry.name = form
            .name
            .as_deref()
            .map(|n| form.method_key().unwrap_or_else(|| n.to_string()));
        entry.signature = super::signature(form);
        entry.heading = super::heading(form);
    }
    entry
}

/// Whether a list's operator (the text after its `(`) starts with `def`, its package
/// prefix aside.
fn operator_defines(after: &[u8]) -> bool {
    let s = after
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(after.len());
    let token_end = after[s..]
        .iter()
        .position(|c| c.is_ascii_whitespace() || matches!(c, b'(' | b')' | b'"' | b';'))
        .map_or(after.len(), |n| s + n);
    let token = &after[s..token_end];
    let name = match token.iter().rposition(|&c| c == b':') {
        Some(colon) => &token[colon + 1..],
        None => token,
    };
    name.len() > 3 && name[..3].eq_ignore_ascii_case(b"def")
}

/// The index of the `"` or `|` closing the one at `open`, and the newlines before it.
fn closing(b: &[u8], open: usize) -> (usize, usize) {
    let (mut k, mut lines) = (open + 1, 0);
    while k < b.len() {
        match b[k] {
            b'\\' => k += 1,
            b'\n' => lines += 1,
            c if c == b[open] => return (k, lines),
            _ => {}
        }
        k += 1;
    }
    (b.len(), lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_use_in_a_binding_template_goes_to_the_definition_it_writes() {
        let text = "(macrolet ((def (name)\n `(progn\n   (defoptimizer (,name derive-type) ()\n     (foo 1)))))\n  (def floor)\n  (foo 2))";
        let b = text.as_bytes();
        let first = text.find("foo 1").unwrap();
        let second = text.find("foo 2").unwrap();
        let got = definitions_of_uses(b, (0, b.len(), 1), &[first, second]);
        let start = text.find("(defoptimizer").unwrap();
        assert_eq!(
            got,
            [
                Some(TemplateForm {
                    start,
                    end: text.find(")))))").unwrap() + 2,
                    start_line: 3,
                    end_line: 4,
                }),
                None
            ]
        );
    }

    #[test]
    fn strings_comments_and_the_binding_itself_are_not_lists() {
        // The binding `(defthing ...)` is not a template's definition; a `(` in a
        // string or a comment opens nothing.
        let text = "(macrolet ((defthing (x) \"(def\" ; (defun\n `(list ,x (foo)))) (defthing 1))";
        let b = text.as_bytes();
        let at = text.find("foo").unwrap();
        assert_eq!(definitions_of_uses(b, (0, b.len(), 1), &[at]), [None]);
    }
}
