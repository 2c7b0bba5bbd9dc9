//! Alexandria's pure helpers that macros compute their expansions with:
//! `(parse-body body :documentation t)` (the forms, the declarations and the docstring,
//! as three values) and `if-let`/`when-let` (written as the `let` and `if` they are).

use super::super::datum::Val;
use super::super::{Budget, Env};
use super::{exec, values};

/// Whether [`parse_body`] computes `(operator ...)`.
pub(crate) fn is_function(operator: &str) -> bool {
    operator == "parse-body"
}

/// `(parse-body body &key documentation whole)` on evaluated arguments: the body's forms
/// after its declarations (and, with `:documentation` true, its docstring when a form
/// follows it), as the first of three values: forms, declarations, docstring.
pub(crate) fn parse_body(args: &[Val], budget: &Budget) -> Val {
    let Some((body, keys)) = args.split_first() else {
        return Val::Unknown;
    };
    let Some(mut forms) = body.items() else {
        return Val::Unknown;
    };
    let mut documentation = false;
    for pair in keys.chunks(2) {
        match pair {
            [k, v] if k.is_keyword() && k.symbol_name() == Some("documentation") => {
                match super::truth(v) {
                    Some(t) => documentation = t,
                    None => return Val::Unknown,
                }
            }
            [k, _] if k.is_keyword() => {}
            _ => return Val::Unknown,
        }
    }
    let mut declarations = Vec::new();
    let mut doc = Val::sym("nil");
    while let Some((first, rest)) = forms.split_first() {
        match first {
            Val::Str(_) if documentation && doc.is_nil() && !rest.is_empty() => doc = first.clone(),
            _ if first.head() == Some("declare") => declarations.push(first.clone()),
            _ => break,
        }
        forms = rest;
    }
    let list = |v: Vec<Val>| {
        if v.is_empty() {
            Val::sym("nil")
        } else {
            Val::List(v)
        }
    };
    values::returned(vec![list(forms.to_vec()), list(declarations), doc], budget)
}

/// Whether `operator` is `if-let` or `when-let`.
pub(crate) fn is_form(operator: &str) -> bool {
    matches!(operator, "if-let" | "when-let")
}

/// `(if-let bindings then [else])` / `(when-let bindings . body)`: the bindings' variables
/// bound for the branch taken when all their values are true.
pub(crate) fn value(
    operator: &str,
    args: &[Val],
    env: &mut Env,
    budget: &mut Budget,
    depth: usize,
) -> Option<Val> {
    let Some((bindings, rest)) = args.split_first() else {
        return Some(Val::Unknown);
    };
    // `(if-let (var form) ...)` binds one variable.
    let bindings = match bindings.items() {
        Some([Val::Sym(_), _]) => vec![bindings.clone()],
        Some(items) => items.to_vec(),
        None => return Some(Val::Unknown),
    };
    let vars: Vec<Val> = bindings
        .iter()
        .filter_map(|b| b.items().and_then(|i| i.first().cloned()))
        .collect();
    let mut test = vec![Val::sym("and")];
    test.extend(vars);
    let choice_operator = if operator == "if-let" { "if" } else { "when" };
    let mut choice = vec![Val::sym(choice_operator), Val::List(test)];
    choice.extend(rest.iter().cloned());
    let form = Val::List(vec![
        Val::sym("let"),
        Val::List(bindings),
        Val::List(choice),
    ]);
    budget.spend(form.size())?;
    exec(&form, env, budget, depth)
}
