//! A backquote template instantiated with the macro's variables bound: `,x` and `,@x`
//! replaced by their values (depth 1: a nested backquote is left as written), and the
//! expressions a macro computes names with evaluated when they are pure: a variable, a
//! constant, a quoted datum, a call of a builder (`builders.rs`) or of a local function
//! of the macro's body (`flet`, `labels`) whose value is one of these. Anything else is
//! [`Val::Unknown`], never evaluated.

use super::datum::{Val, MAX_DEPTH};
use super::{builders, pure};
use super::{Budget, Env};

/// How deep a result may nest: a template's depth plus its values' (each at most
/// [`MAX_DEPTH`]), and again per macro calling a macro.
const MAX_RESULT_DEPTH: usize = 4 * MAX_DEPTH;

/// The value of the expression `x`; `None` once the budget is spent.
pub(crate) fn eval(x: &Val, env: &Env, budget: &mut Budget, depth: usize) -> Option<Val> {
    budget.spend(1)?;
    Some(match x {
        Val::Sym(_) if x.is_keyword() || x.is_symbol("t") || x.is_nil() => x.clone(),
        Val::Sym(w) => match env.get(&w.name) {
            Some(v) => {
                budget.spend(v.size())?;
                v.clone()
            }
            None => Val::Unknown,
        },
        Val::Str(_) | Val::Atom(_) => x.clone(),
        Val::Quote(q) => {
            budget.spend(q.size())?;
            (**q).clone()
        }
        Val::Backquote(t) => fill(t, env, budget, depth + 1)?,
        Val::List(items) => match items.split_first() {
            Some((head, args)) => match head.symbol_name() {
                Some(op) if builders::is_builder(op) => {
                    let mut values = Vec::with_capacity(args.len());
                    for a in args {
                        values.push(eval(a, env, budget, depth + 1)?);
                    }
                    // A builder's text is at most its arguments' (each printed once).
                    budget.spend(values.iter().map(Val::size).sum())?;
                    builders::call(op, &values)
                }
                Some(op) if pure::is_pure(op) => pure::value(op, args, env, budget, depth)?,
                Some(op) => match env.function(op) {
                    Some(f) => {
                        let mut values = Vec::with_capacity(args.len());
                        for a in args {
                            values.push(eval(a, env, budget, depth + 1)?);
                        }
                        super::call_function(&f, values, env, budget, depth + 1)?
                    }
                    None => Val::Unknown,
                },
                _ => Val::Unknown,
            },
            None => x.clone(),
        },
        _ => Val::Unknown,
    })
}

/// The template `t` with its commas filled in; `None` once the budget is spent.
pub(crate) fn fill(t: &Val, env: &Env, budget: &mut Budget, depth: usize) -> Option<Val> {
    budget.spend(1)?;
    if depth > MAX_RESULT_DEPTH {
        return Some(Val::Unknown);
    }
    Some(match t {
        Val::Comma(x) => eval(x, env, budget, depth)?,
        Val::Splice(_) => Val::Unknown,
        Val::List(items) => Val::List(fill_items(items, env, budget, depth)?),
        Val::Dotted(items, tail) => {
            let mut out = fill_items(items, env, budget, depth)?;
            match fill(tail, env, budget, depth + 1)? {
                Val::List(more) => {
                    out.extend(more);
                    Val::List(out)
                }
                v if v.is_nil() => Val::List(out),
                v => Val::Dotted(out, Box::new(v)),
            }
        }
        Val::Quote(x) => Val::Quote(Box::new(fill(x, env, budget, depth + 1)?)),
        Val::Function(x) => Val::Function(Box::new(fill(x, env, budget, depth + 1)?)),
        _ => {
            budget.spend(t.size())?;
            t.clone()
        }
    })
}

/// A list's elements filled in, `,@x` spliced.
fn fill_items(items: &[Val], env: &Env, budget: &mut Budget, depth: usize) -> Option<Vec<Val>> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        match item {
            Val::Splice(x) => match eval(x, env, budget, depth + 1)? {
                v if v.is_nil() => {}
                Val::List(more) => out.extend(more),
                _ => out.push(Val::Unknown),
            },
            _ => out.push(fill(item, env, budget, depth + 1)?),
        }
    }
    Some(out)
}
