//! A backquote template instantiated with the macro's variables bound: `,x` and `,@x`
//! replaced by their values (a nested backquote keeps its own commas: `,,x` fills in the
//! inner comma's form), and the
//! expressions a macro computes names with evaluated when they are pure: a variable, a
//! constant, a quoted datum, a call of a builder (`builders.rs`) or of a local function
//! of the macro's body (`flet`, `labels`) whose value is one of these. Anything else is
//! [`Val::Unknown`], never evaluated.
//!
//! Besides the builders, the computing code of a macro (or of a project function,
//! `functions.rs`) may use these pure forms, computed on known values ([`is_pure`],
//! [`value`]): `if`, `when`, `unless`, `progn`, `with-standard-io-syntax` (its body's
//! value: the builders print as the standard syntax does), `list`, and `mapcar`, `map 'list`, `mapcan`,
//! `apply`, `funcall` of a `lambda`, of a local or project function or of a builder. A
//! test whose value is unknown makes the form's value unknown; a function that is none of
//! these is not called. Each is a step of the expansion's budget, each call one more.

use super::builders;
use super::datum::{Val, MAX_DEPTH};
use super::eval;
use super::{Budget, Env, Function};

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
        // `#'(lambda ...)`: the function, called where it is given (`#'name` stays
        // unknown: nibbles' read-time loops would make `defknown`s SBCL does not record).
        Val::Function(f) if f.head() == Some("lambda") => {
            budget.spend(f.size())?;
            x.clone()
        }
        Val::List(items) => match items.split_first() {
            Some((head, args)) => match head.symbol_name() {
                Some(op) if builders::is_builder(op) => {
                    let values = values(args, env, budget, depth + 1)?;
                    // A builder's text is at most its arguments' (each printed once).
                    budget.spend(values.iter().map(Val::size).sum())?;
                    builders::call(op, &values)
                }
                Some(op) if is_pure(op) => value(op, args, env, budget, depth)?,
                Some(op) if eval::is_function(op) => {
                    let values = values(args, env, budget, depth + 1)?;
                    budget.spend(values.iter().map(Val::size).sum())?;
                    if op == "values" {
                        eval::values::returned(values, budget)
                    } else {
                        eval::call_charged(op, &values, budget)?
                    }
                }
                Some(op) if eval::is_form(op) => eval::value(x, env, budget, depth + 1)?,
                Some(op) if eval::context::is_function(op) => {
                    let values = values(args, env, budget, depth + 1)?;
                    eval::context::call(op, &values, env, budget)?
                }
                Some(op) if eval::code::is_form(op) => {
                    eval::code::value(op, args, env, budget, depth + 1)?
                }
                Some("get") if env.properties.is_some() => {
                    let values = values(args, env, budget, depth + 1)?;
                    super::properties::get(env, &values, budget)?
                }
                Some(op) => match env.function(op) {
                    Some(f) => {
                        let values = values(args, env, budget, depth + 1)?;
                        super::call_function(&f, values, env, budget, depth + 1)?
                    }
                    None => eval::code::macro_value(x, env, budget, depth)?.unwrap_or(Val::Unknown),
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
    fill_at(t, 1, env, budget, depth)
}

/// [`fill`] at backquote `level` (1: the macro's own template). A nested backquote
/// raises the level, a comma lowers it: only a comma at level 1 is evaluated
/// (consfigurator's ``(defmacro ,mname ... `(... ,,namev))``: the inner template keeps
/// its own commas, with `,namev` filled in).
fn fill_at(t: &Val, level: usize, env: &Env, budget: &mut Budget, depth: usize) -> Option<Val> {
    budget.spend(1)?;
    if depth > MAX_RESULT_DEPTH {
        return Some(Val::Unknown);
    }
    Some(match t {
        Val::Comma(x) if level == 1 => eval(x, env, budget, depth)?,
        Val::Comma(x) => Val::Comma(Box::new(fill_at(x, level - 1, env, budget, depth + 1)?)),
        Val::Splice(_) if level == 1 => Val::Unknown,
        Val::Splice(x) => Val::Splice(Box::new(fill_at(x, level - 1, env, budget, depth + 1)?)),
        Val::Backquote(x) => {
            Val::Backquote(Box::new(fill_at(x, level + 1, env, budget, depth + 1)?))
        }
        Val::List(items) => Val::List(fill_items(items, level, env, budget, depth)?),
        Val::Dotted(items, tail) => {
            let mut out = fill_items(items, level, env, budget, depth)?;
            match fill_at(tail, level, env, budget, depth + 1)? {
                Val::List(more) => {
                    out.extend(more);
                    Val::List(out)
                }
                v if v.is_nil() => Val::List(out),
                v => Val::Dotted(out, Box::new(v)),
            }
        }
        Val::Quote(x) => Val::Quote(Box::new(fill_at(x, level, env, budget, depth + 1)?)),
        Val::Function(x) => Val::Function(Box::new(fill_at(x, level, env, budget, depth + 1)?)),
        _ => {
            budget.spend(t.size())?;
            t.clone()
        }
    })
}

/// A list's elements filled in, `,@x` spliced (at level 1).
fn fill_items(
    items: &[Val],
    level: usize,
    env: &Env,
    budget: &mut Budget,
    depth: usize,
) -> Option<Vec<Val>> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        match item {
            Val::Splice(x) if level == 1 => match eval(x, env, budget, depth + 1)? {
                v if v.is_nil() => {}
                Val::List(more) => out.extend(more),
                _ => out.push(Val::Unknown),
            },
            _ => out.push(fill_at(item, level, env, budget, depth + 1)?),
        }
    }
    Some(out)
}

/// Whether [`value`] computes `(operator ...)`.
pub(crate) fn is_pure(operator: &str) -> bool {
    matches!(
        operator,
        "if" | "when"
            | "unless"
            | "progn"
            | "with-standard-io-syntax"
            | "list"
            | "mapcar"
            | "map"
            | "mapcan"
            | "apply"
            | "funcall"
    )
}

/// The value of `(operator args...)` for a [`is_pure`] operator; `None` once the budget
/// is spent.
pub(crate) fn value(
    operator: &str,
    args: &[Val],
    env: &Env,
    budget: &mut Budget,
    depth: usize,
) -> Option<Val> {
    let depth = depth + 1;
    Some(match operator {
        "if" => match args {
            [test, then, rest @ ..] if rest.len() <= 1 => {
                match truth(&eval(test, env, budget, depth)?) {
                    Some(true) => eval(then, env, budget, depth)?,
                    Some(false) => match rest.first() {
                        Some(otherwise) => eval(otherwise, env, budget, depth)?,
                        None => Val::sym("nil"),
                    },
                    None => Val::Unknown,
                }
            }
            _ => Val::Unknown,
        },
        "when" | "unless" => {
            let Some((test, body)) = args.split_first() else {
                return Some(Val::Unknown);
            };
            match truth(&eval(test, env, budget, depth)?) {
                Some(t) if t == (operator == "when") => progn(body, env, budget, depth)?,
                Some(_) => Val::sym("nil"),
                None => Val::Unknown,
            }
        }
        "progn" | "with-standard-io-syntax" => progn(args, env, budget, depth)?,
        "list" => Val::List(values(args, env, budget, depth)?),
        "funcall" => {
            let Some((f, rest)) = args.split_first() else {
                return Some(Val::Unknown);
            };
            let values = values(rest, env, budget, depth)?;
            call(f, values, env, budget, depth)?
        }
        "apply" => {
            let Some((f, rest)) = args.split_first() else {
                return Some(Val::Unknown);
            };
            let mut values = values(rest, env, budget, depth)?;
            // The last argument is the list of the rest.
            match values.pop().as_ref().and_then(Val::items) {
                Some(spread) => {
                    values.extend_from_slice(spread);
                    call(f, values, env, budget, depth)?
                }
                None => Val::Unknown,
            }
        }
        "mapcar" => {
            let Some((f, rest)) = args.split_first() else {
                return Some(Val::Unknown);
            };
            match map_list(f, rest, env, budget, depth)? {
                Some(out) => Val::List(out),
                None => Val::Unknown,
            }
        }
        // `(map 'list f ...)`: `mapcar`'s value; another result type is unknown.
        "map" => match args {
            [Val::Quote(k), f, rest @ ..] if k.is_symbol("list") => {
                match map_list(f, rest, env, budget, depth)? {
                    Some(out) => Val::List(out),
                    None => Val::Unknown,
                }
            }
            _ => Val::Unknown,
        },
        // The lists the function returns, appended.
        "mapcan" => {
            let Some((f, rest)) = args.split_first() else {
                return Some(Val::Unknown);
            };
            match map_list(f, rest, env, budget, depth)? {
                Some(out) => eval::call("append", &out),
                None => Val::Unknown,
            }
        }
        _ => Val::Unknown,
    })
}

/// The values of `f` called with each element of the lists of `rest`, up to the
/// shortest: `Some(None)` when a list is not known; `None` once the budget is spent.
fn map_list(
    f: &Val,
    rest: &[Val],
    env: &Env,
    budget: &mut Budget,
    depth: usize,
) -> Option<Option<Vec<Val>>> {
    let lists = values(rest, env, budget, depth)?;
    let Some(lists) = lists.iter().map(Val::items).collect::<Option<Vec<_>>>() else {
        return Some(None);
    };
    let n = lists.iter().map(|l| l.len()).min().unwrap_or(0);
    let mut out = Vec::with_capacity(n);
    for k in 0..n {
        let args: Vec<Val> = lists.iter().map(|l| l[k].clone()).collect();
        budget.spend(args.iter().map(Val::size).sum())?;
        out.push(call(f, args, env, budget, depth)?);
    }
    Some(Some(out))
}

/// Whether a value is true: `None` when it is unknown.
fn truth(v: &Val) -> Option<bool> {
    match v {
        Val::Unknown => None,
        _ => Some(!v.is_nil()),
    }
}

/// The value of the forms of a `progn`: its last one's; unknown if one before assigns a
/// variable (its value after is not followed).
fn progn(body: &[Val], env: &Env, budget: &mut Budget, depth: usize) -> Option<Val> {
    let Some((last, before)) = body.split_last() else {
        return Some(Val::sym("nil"));
    };
    let assigns = |f: &Val| {
        matches!(
            f.head(),
            Some(
                "setf" | "setq" | "psetf" | "psetq" | "push" | "pushnew" | "pop" | "incf" | "decf"
            )
        )
    };
    if before.iter().any(assigns) {
        return Some(Val::Unknown);
    }
    eval(last, env, budget, depth)
}

fn values(args: &[Val], env: &Env, budget: &mut Budget, depth: usize) -> Option<Vec<Val>> {
    let mut out = Vec::with_capacity(args.len());
    for a in args {
        out.push(eval(a, env, budget, depth)?);
    }
    Some(out)
}

/// The value of the function `f` (as written: `#'name`, `'name`, `#'(lambda ...)`,
/// `(lambda ...)`) called with `args`; unknown for any other function.
fn call(f: &Val, args: Vec<Val>, env: &Env, budget: &mut Budget, depth: usize) -> Option<Val> {
    // A variable holding a function (`(funcall body-function ...)`).
    let held = match f {
        Val::Sym(w) => env.get(&w.name).cloned(),
        _ => None,
    };
    let f = held.as_ref().unwrap_or(f);
    let designator = match f {
        Val::Function(x) | Val::Quote(x) => &**x,
        _ if f.head() == Some("lambda") => f,
        _ => return Some(Val::Unknown),
    };
    if let Some(name) = designator.symbol_name() {
        if builders::is_builder(name) {
            budget.spend(args.len())?;
            return Some(builders::call(name, &args));
        }
        if name == "list" {
            return Some(Val::List(args));
        }
        // `(mapcar #'first slots)`, `(mapcar #'ensure-list slots)`: a function of the
        // evaluator's.
        if eval::is_function(name) {
            budget.spend(args.iter().map(Val::size).sum::<usize>() + 1)?;
            return eval::call_charged(name, &args, budget);
        }
        return match env.function(name) {
            Some(function) => super::call_function(&function, args, env, budget, depth),
            None => Some(Val::Unknown),
        };
    }
    let parts = designator
        .items()
        .filter(|_| designator.head() == Some("lambda"));
    let Some(parts) = parts else {
        return Some(Val::Unknown);
    };
    budget.spend(designator.size())?;
    let lambda = Function {
        lambda_list: parts.get(1).cloned().unwrap_or_else(|| Val::sym("nil")),
        body: parts.get(2..).unwrap_or_default().to_vec(),
        global: false,
    };
    super::call_function(&lambda, args, env, budget, depth)
}
