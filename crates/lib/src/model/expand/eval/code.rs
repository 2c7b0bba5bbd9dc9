//! Forms of ordinary code met in a project function or a macro's body that the
//! evaluator reads as Lisp would, without running anything of the user's: `(the TYPE
//! FORM)` is FORM's value; `(constantp FORM)` is told from FORM's shape; a call of one of
//! the scope's learned macros (clx's `get-put-items` rounding an index with its own
//! `wround` macro) is the value of its expansion, made with those macros
//! (`context.rs`'s `macroexpand`, bounded the same way).

use super::super::datum::Val;
use super::super::{template, Budget, Env};

/// Whether `operator` is read here (a learned macro's call is asked of
/// [`macro_value`]).
pub(crate) fn is_form(operator: &str) -> bool {
    matches!(operator, "the" | "constantp")
}

/// The value of `(the TYPE FORM)` or `(constantp FORM)`; `None` once the budget is spent.
pub(crate) fn value(
    operator: &str,
    args: &[Val],
    env: &Env,
    budget: &mut Budget,
    depth: usize,
) -> Option<Val> {
    match (operator, args) {
        ("the", [_, form]) => template::eval(form, env, budget, depth + 1),
        ("constantp", [form] | [form, _]) => {
            let form = template::eval(form, env, budget, depth + 1)?;
            budget.spend(form.size())?;
            Some(match constant(&form) {
                Some(true) => Val::sym("t"),
                Some(false) => Val::sym("nil"),
                None => Val::Unknown,
            })
        }
        _ => Some(Val::Unknown),
    }
}

/// Whether the form `v` is a constant form: a self-evaluating atom, a keyword, `t`,
/// `nil`, a quoted datum; not when it reads a variable (a symbol other than those,
/// inside a call). A lone symbol may be a `defconstant` of anywhere: unknown; so is a
/// call of constants only (SBCL folds some).
fn constant(v: &Val) -> Option<bool> {
    match v {
        Val::Str(_) | Val::Atom(_) | Val::Quote(_) => Some(true),
        Val::Sym(_) if v.is_keyword() || v.is_nil() || v.is_symbol("t") => Some(true),
        Val::Sym(_) | Val::Unknown => None,
        Val::List(items) if v.head() == Some("quote") && items.len() == 2 => Some(true),
        Val::List(items) => {
            let mut stack: Vec<&Val> = items.iter().skip(1).collect();
            while let Some(x) = stack.pop() {
                match x {
                    Val::Sym(_) if !(x.is_keyword() || x.is_nil() || x.is_symbol("t")) => {
                        return Some(false)
                    }
                    Val::List(inner) if x.head() != Some("quote") => {
                        stack.extend(inner.iter().skip(1))
                    }
                    _ => {}
                }
            }
            None
        }
        _ => None,
    }
}

/// The value of `x`, a call whose operator is one of the scope's learned macros: its
/// expansion (`macroexpand`), evaluated. `Some(None)` when the operator is no learned
/// macro; unknown when the expansion is not known.
pub(crate) fn macro_value(
    x: &Val,
    env: &Env,
    budget: &mut Budget,
    depth: usize,
) -> Option<Option<Val>> {
    let (Some(op), Some(map)) = (x.head(), &env.macros) else {
        return Some(None);
    };
    if !map.contains_key(op) {
        return Some(None);
    }
    let expansion = super::context::call("macroexpand", std::slice::from_ref(x), env, budget)?;
    // Still this macro's call (its expansion not known), or unknown: unknown.
    if matches!(expansion, Val::Unknown) || expansion.head() == Some(op) {
        return Some(Some(Val::Unknown));
    }
    Some(Some(template::eval(&expansion, env, budget, depth + 1)?))
}

/// Whether `forms` assign a variable inside a template's comma (`,@(cdr (pop forms))`):
/// the evaluator fills a template without assigning, so a loop over such a body would
/// never see the variable change (consfigurator's `(loop while (keywordp (caar forms))
/// ...)`): it is unknown instead.
pub(crate) fn assigns_in_template(forms: &[Val]) -> bool {
    // (value, inside a template's comma)
    let mut stack: Vec<(&Val, bool)> = forms.iter().map(|v| (v, false)).collect();
    while let Some((v, in_comma)) = stack.pop() {
        match v {
            Val::Comma(x) | Val::Splice(x) => stack.push((x, true)),
            Val::List(items) => {
                if in_comma && v.head().is_some_and(super::control::is_assignment_like) {
                    return true;
                }
                stack.extend(items.iter().map(|i| (i, in_comma)));
            }
            Val::Dotted(items, tail) => {
                stack.extend(items.iter().map(|i| (i, in_comma)));
                stack.push((tail, in_comma));
            }
            Val::Backquote(x) | Val::Quote(x) | Val::Function(x) => stack.push((x, in_comma)),
            _ => {}
        }
    }
    false
}
