//! CFFI's `parse-name-and-options` and `translate-name-from-foreign`, which definer
//! macros wrapping `defcfun` (osicat's `defsyscall`, consfigurator's
//! `define-error-retval-cfun`) compute their names with: pure, from a name spec to the
//! Lisp name, the C name and the options, as three values, or from a C name to the Lisp
//! name (docs/find.md).

use super::super::datum::Val;
use super::super::Budget;
use super::values;

/// Whether [`call`] computes `(operator ...)`.
pub(crate) fn is_function(operator: &str) -> bool {
    operator == "parse-name-and-options" || operator == TRANSLATE_FROM_FOREIGN
}

const TRANSLATE_FROM_FOREIGN: &str = "translate-name-from-foreign";

/// The value of an [`is_function`] operator on evaluated arguments.
pub(crate) fn call(operator: &str, args: &[Val], budget: &Budget) -> Val {
    if operator == TRANSLATE_FROM_FOREIGN {
        translate_name_from_foreign(args)
    } else {
        parse_name_and_options(args, budget)
    }
}

/// `(translate-name-from-foreign C-NAME PACKAGE &optional varp)`, CFFI's default method
/// (a project's own method of it is not read): the Lisp name of a C name string.
fn translate_name_from_foreign(args: &[Val]) -> Val {
    let (c, varp) = match args {
        [Val::Str(c), _] => (c, false),
        [Val::Str(c), _, varp] => match super::truth(varp) {
            Some(v) => (c, v),
            None => return Val::Unknown,
        },
        _ => return Val::Unknown,
    };
    lisp_of(c, varp).unwrap_or(Val::Unknown)
}

/// `(parse-name-and-options spec &optional varp)` on evaluated arguments: the values Lisp
/// name, C name, options; unknown for a spec CFFI would refuse.
pub(crate) fn parse_name_and_options(args: &[Val], budget: &Budget) -> Val {
    let (spec, varp) = match args {
        [spec] => (spec, false),
        [spec, varp] => match super::truth(varp) {
            Some(v) => (spec, v),
            None => return Val::Unknown,
        },
        _ => return Val::Unknown,
    };
    let nil = || Val::sym("nil");
    let options = |rest: &[Val]| {
        if rest.is_empty() {
            nil()
        } else {
            Val::List(rest.to_vec())
        }
    };
    let lisp_name = |v: &Val| matches!(v, Val::Sym(_)) && !v.is_keyword() && !v.is_nil();
    let parsed = match spec {
        Val::Str(c) => lisp_of(c, varp).map(|l| (l, spec.clone(), nil())),
        _ if lisp_name(spec) => c_of(spec, varp).map(|c| (spec.clone(), c, nil())),
        _ => match spec.items() {
            Some([c @ Val::Str(name), rest @ ..]) => match rest.split_first() {
                Some((l, more)) if lisp_name(l) => Some((l.clone(), c.clone(), options(more))),
                None => lisp_of(name, varp).map(|l| (l, c.clone(), nil())),
                Some((k, _)) if k.is_keyword() => {
                    lisp_of(name, varp).map(|l| (l, c.clone(), options(rest)))
                }
                _ => None,
            },
            Some([l, rest @ ..]) if lisp_name(l) => match rest.split_first() {
                Some((c @ Val::Str(_), more)) => Some((l.clone(), c.clone(), options(more))),
                None => c_of(l, varp).map(|c| (l.clone(), c, nil())),
                Some((k, _)) if k.is_keyword() => {
                    c_of(l, varp).map(|c| (l.clone(), c, options(rest)))
                }
                _ => None,
            },
            _ => None,
        },
    };
    match parsed {
        Some((lisp, c, opts)) => values::returned(vec![lisp, c, opts], budget),
        None => Val::Unknown,
    }
}

/// CFFI's default Lisp name of a C name: `_` as `-` (folded); a variable's between `*`s.
fn lisp_of(c: &str, varp: bool) -> Option<Val> {
    if c.is_empty() {
        return None;
    }
    let name = c.replace('_', "-").to_lowercase();
    Some(Val::sym(&if varp { format!("*{name}*") } else { name }))
}

/// CFFI's default C name of a Lisp name: `-` as `_`, lower case; a variable's without
/// its `*`s.
fn c_of(lisp: &Val, varp: bool) -> Option<Val> {
    let name = lisp.symbol_name()?;
    let bare = if varp {
        name.trim_start_matches('*').trim_end_matches('*')
    } else {
        name
    };
    Some(Val::Str(bare.replace('-', "_").to_lowercase().into()))
}
