//! The pure forms a macro's computing code (or a project function's, `functions.rs`)
//! may use besides the builders, computed on known values: `if`, `when`, `unless`,
//! `progn`, `with-standard-io-syntax` (its body's value: the builders print as the
//! standard syntax does), `list`, and `mapcar`, `apply`, `funcall` of a `lambda`, of a
//! local or project function or of a builder. A test whose value is unknown makes the
//! form's value unknown; a function that is none of these is not called. Each is a step
//! of the expansion's budget, each call one more.

use super::builders;
use super::datum::Val;
use super::template::eval;
use super::{Budget, Env, Function};

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
            let lists = values(rest, env, budget, depth)?;
            let Some(lists) = lists.iter().map(Val::items).collect::<Option<Vec<_>>>() else {
                return Some(Val::Unknown);
            };
            let n = lists.iter().map(|l| l.len()).min().unwrap_or(0);
            let mut out = Vec::with_capacity(n);
            for k in 0..n {
                let args: Vec<Val> = lists.iter().map(|l| l[k].clone()).collect();
                budget.spend(args.iter().map(Val::size).sum())?;
                out.push(call(f, args, env, budget, depth)?);
            }
            Val::List(out)
        }
        _ => Val::Unknown,
    })
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
