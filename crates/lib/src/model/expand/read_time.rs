//! Top-level read-time forms (`#.(loop ... collect `(defun ,name ...) ...)`) and the
//! bodies of `macrolet`s as sources of definitions: a `#.` form at the start of a line
//! whose value is computed by the evaluator (`eval/`) is expanded as a call of a macro
//! without parameters whose body is the form; the project functions both call are
//! learned as a global macro's are (`functions.rs`). Only the form's text is read: it is
//! computed, never run.

use super::datum::{read, Val};
use super::{functions, macro_from, Macro};
use crate::caseless::Caseless;
use std::collections::HashSet;
use std::sync::LazyLock;

/// Of the `#.` of `b` at `all`, those where a `#.(` starts a line (a top-level read-time
/// form, by convention).
pub(crate) fn hits(b: &[u8], all: &[usize]) -> Vec<usize> {
    all.iter()
        .copied()
        .filter(|&h| b.get(h + 2) == Some(&b'(') && (h == 0 || b[h - 1] == b'\n'))
        .collect()
}

/// Whether the text at `start` is a read-time form.
pub(crate) fn is_read_time(b: &[u8], start: usize) -> bool {
    b.get(start..start + 3) == Some(b"#.(")
}

/// The read-time form `b[start..end]` (`#.` and all) as a macro without parameters whose
/// body is the form, when its value may be a template that defines something.
pub(crate) fn as_macro(
    b: &[u8],
    start: usize,
    end: usize,
    reads: &dyn Fn(bool, &[u8]) -> bool,
) -> Option<Macro> {
    let form = super::read_form(b, start + 2, end, reads)?;
    let (_, m) = macro_from("#.".to_string(), Val::sym("nil"), vec![form])?;
    let ends = super::ends_in_template(&m.body);
    (ends && m.defines).then_some(m)
}

/// What the top-level read-time forms and `macrolet`s of `b` need learned: whether a
/// read-time form defines something, and the names of the functions they call.
#[derive(Default)]
pub(crate) struct Needs {
    pub defines: bool,
    pub calls: HashSet<String>,
    /// The global variables its read-time forms may read, with the operator of the
    /// list each form is in (`read_eval.rs`).
    pub variables: HashSet<(String, String)>,
}

/// `macrolets`: whether to read the `macrolet`s too (a search by pattern: a search by
/// name reads a `macrolet` only when its own text can make the name, docs/find.md).
pub(crate) fn needs(b: &[u8], macrolets: bool, reads: &dyn Fn(bool, &[u8]) -> bool) -> Needs {
    let mut out = Needs::default();
    // Every `#.` of the file, from one pass over it.
    let all: Vec<usize> = super::read_eval::hits(b).collect();
    out.variables = super::read_eval::variables(b, &all);
    // The top-level forms that open with a hit, from one scan of the file: scanning on
    // from each hit to its form's end read a file of unclosed `#.(` lines once per line.
    super::each_form_holding(b, &hits(b, &all), &mut |start, end| {
        if !is_read_time(b, start) {
            return;
        }
        if let Some(m) = as_macro(b, start, end, reads) {
            out.defines = true;
            out.calls.extend(functions::called(&m.body));
        }
    });
    if !macrolets {
        return out;
    }
    static MACROLET: LazyLock<Caseless> = LazyLock::new(|| Caseless::new(b"(macrolet"));
    let local: Vec<usize> = MACROLET.lower_or_upper(b).collect();
    let mut reads = |plus, e: &[u8]| reads(plus, e);
    super::each_form_holding(b, &local, &mut |start, end| {
        for form in read(b, start, end, &mut reads) {
            local_calls(&form, &mut out.calls);
        }
    });
    out
}

/// The functions the bindings of the `macrolet`s in `form` call, for those that may
/// define something.
fn local_calls(form: &Val, out: &mut HashSet<String>) {
    let mut stack = vec![form];
    while let Some(v) = stack.pop() {
        if v.head() == Some("macrolet") {
            for binding in super::local_macros(v) {
                let m = &binding.1;
                if functions::may_define(m.defines, &m.body) {
                    out.extend(functions::called(&m.body));
                }
            }
        }
        stack.extend(v.children().filter(|c| matches!(c, Val::List(_))));
    }
}
