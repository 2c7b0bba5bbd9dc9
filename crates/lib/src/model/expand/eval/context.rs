//! What a macro's expansion function may ask of its compilation environment:
//! `(macroexpand FORM ENV)` and `(macroexpand-1 FORM ENV)` (clx's `check-put` branching
//! on `(null (macroexpand `(type-check ,var ',type) env))`). FORM is expanded with the
//! scope's learned macros (`super::super::instantiate`), within the expansion's budget;
//! ENV is not looked at (`&environment` binds nothing known, so local macros are not
//! seen). A form whose operator is a Common Lisp function or special operator, or that
//! is no list at all, is returned unchanged, as Common Lisp does; a form whose operator
//! is anything else (a Common Lisp macro such as `when`, whose expansion is the
//! implementation's, another system's macro, a project macro that is not learned) is
//! unknown: it may be a macro.

use super::super::datum::Val;
use super::super::{builders, instantiate, Budget, Env, Macro, Macros, MAX_MACRO_DEPTH};
use std::sync::Arc;

/// Whether `operator` is computed here.
pub(crate) fn is_function(operator: &str) -> bool {
    matches!(operator, "macroexpand" | "macroexpand-1")
}

/// What a form is to `macroexpand`.
enum Head {
    Macro(Arc<Macro>),
    NotAMacro,
    Unknown,
}

/// The macros of Common Lisp (its other symbols in operator position are functions and
/// special operators, never macros).
const COMMON_LISP_MACROS: [&str; 92] = [
    "and",
    "assert",
    "call-method",
    "case",
    "ccase",
    "check-type",
    "cond",
    "ctypecase",
    "decf",
    "declaim",
    "defclass",
    "defconstant",
    "defgeneric",
    "define-compiler-macro",
    "define-condition",
    "define-method-combination",
    "define-modify-macro",
    "define-setf-expander",
    "define-symbol-macro",
    "defmacro",
    "defmethod",
    "defpackage",
    "defparameter",
    "defsetf",
    "defstruct",
    "deftype",
    "defun",
    "defvar",
    "destructuring-bind",
    "do",
    "do*",
    "do-all-symbols",
    "do-external-symbols",
    "do-symbols",
    "dolist",
    "dotimes",
    "ecase",
    "etypecase",
    "formatter",
    "handler-bind",
    "handler-case",
    "ignore-errors",
    "in-package",
    "incf",
    "lambda",
    "loop",
    "loop-finish",
    "make-method",
    "multiple-value-bind",
    "multiple-value-list",
    "multiple-value-setq",
    "nth-value",
    "or",
    "pop",
    "pprint-exit-if-list-exhausted",
    "pprint-logical-block",
    "pprint-pop",
    "print-unreadable-object",
    "prog",
    "prog*",
    "prog1",
    "prog2",
    "psetf",
    "psetq",
    "push",
    "pushnew",
    "remf",
    "restart-bind",
    "restart-case",
    "return",
    "rotatef",
    "setf",
    "shiftf",
    "step",
    "time",
    "trace",
    "typecase",
    "unless",
    "untrace",
    "when",
    "with-accessors",
    "with-compilation-unit",
    "with-condition-restarts",
    "with-hash-table-iterator",
    "with-input-from-string",
    "with-open-file",
    "with-open-stream",
    "with-output-to-string",
    "with-package-iterator",
    "with-simple-restart",
    "with-slots",
    "with-standard-io-syntax",
];

fn head(v: &Val, macros: &Macros) -> Head {
    match v {
        Val::Unknown => Head::Unknown,
        Val::List(items) if !items.is_empty() => match v.head() {
            Some(h) => match macros.get(h) {
                Some(m) => Head::Macro(m.clone()),
                None if COMMON_LISP_MACROS.contains(&h) => Head::Unknown,
                None if crate::model::is_common_lisp_symbol(h) => Head::NotAMacro,
                None if super::is_function(h) || builders::is_builder(h) => Head::NotAMacro,
                None => Head::Unknown,
            },
            // `((lambda ...) ...)`: a call.
            None => Head::NotAMacro,
        },
        _ => Head::NotAMacro,
    }
}

thread_local! {
    /// `macroexpand`s under way on this thread, one inside another's expansion.
    static NESTED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The value of `(operator form [env])` on evaluated arguments (`operator` one of
/// [`is_function`]); unknown without the scope's macros, or inside
/// [`MAX_MACRO_DEPTH`] nested `macroexpand`s (a macro asking for its own expansion
/// would recurse without end). `None` once the budget is spent.
pub(crate) fn call(operator: &str, args: &[Val], env: &Env, budget: &mut Budget) -> Option<Val> {
    let nested = NESTED.with(std::cell::Cell::get);
    if nested >= MAX_MACRO_DEPTH {
        return Some(Val::Unknown);
    }
    NESTED.with(|n| n.set(nested + 1));
    let value = expand(operator, args, env, budget);
    NESTED.with(|n| n.set(nested));
    value
}

fn expand(operator: &str, args: &[Val], env: &Env, budget: &mut Budget) -> Option<Val> {
    let (Some(form), Some(map)) = (args.first(), &env.macros) else {
        return Some(Val::Unknown);
    };
    let macros = Macros {
        map: map.clone(),
        functions: env.globals.clone(),
        properties: env.properties.clone(),
        // `*features*` is not carried into a nested expansion: unknown there.
        ..Macros::default()
    };
    let steps = if operator == "macroexpand-1" {
        1
    } else {
        MAX_MACRO_DEPTH
    };
    budget.spend(form.size())?;
    let mut v = form.clone();
    for _ in 0..steps {
        match head(&v, &macros) {
            Head::Macro(m) => match instantiate(&m, &v, &macros, None, budget) {
                Some(expansion) => v = expansion,
                None => return budget.spend(0).map(|()| Val::Unknown),
            },
            Head::NotAMacro => return Some(v),
            Head::Unknown => return Some(Val::Unknown),
        }
    }
    // Still a macro call past the depth: `macroexpand` would go on.
    Some(match (operator, head(&v, &macros)) {
        ("macroexpand", Head::Macro(_) | Head::Unknown) => Val::Unknown,
        _ => v,
    })
}
