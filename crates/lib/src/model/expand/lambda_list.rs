//! A macro lambda list destructured against a call: required parameters (nested lists
//! destructured in turn), `&optional` and `&key` with their defaults (evaluated as
//! templates' expressions are) and supplied-p variables, `&rest`/`&body` and a dotted
//! tail, `&whole`, `&aux`; `&environment` is bound to nothing known. A call that does not
//! fit (too few or too many arguments) is not destructured: `None`, as SBCL would signal
//! an error.

use super::datum::Val;
use super::template::eval;
use super::{Budget, Env};

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Required,
    Optional,
    Rest,
    Key,
    Aux,
}

/// Binds the variables of `pattern` to the parts of `value` in `env`.
pub(crate) fn bind(
    pattern: &Val,
    value: &Val,
    env: &mut Env,
    budget: &mut Budget,
    depth: usize,
) -> Option<()> {
    budget.spend(1)?;
    let (params, tail): (&[Val], Option<&Val>) = match pattern {
        Val::Sym(w) => {
            if !pattern.is_nil() {
                env.bind(&w.name, value.clone());
            }
            return Some(());
        }
        Val::List(p) => (p, None),
        Val::Dotted(p, t) => (p, Some(t)),
        _ => return None,
    };
    // An argument that is not known: every variable of the pattern is unknown.
    if matches!(value, Val::Unknown) {
        unknown_all(pattern, env, budget, depth)?;
        return Some(());
    }
    let args: &[Val] = match value {
        Val::List(items) => items,
        v if v.is_nil() => &[],
        _ => return None,
    };
    let mut next = 0usize;
    let mut state = State::Required;
    let mut rest_seen = false;
    let mut k = 0usize;
    while k < params.len() {
        let p = &params[k];
        k += 1;
        match p.symbol_name() {
            Some("&whole") if !p.is_keyword() => {
                bind(params.get(k)?, value, env, budget, depth + 1)?;
                k += 1;
                continue;
            }
            Some("&environment") if !p.is_keyword() => {
                unknown_all(params.get(k)?, env, budget, depth)?;
                k += 1;
                continue;
            }
            Some("&optional") => state = State::Optional,
            Some("&rest" | "&body") => {
                bind(
                    params.get(k)?,
                    &Val::List(args[next.min(args.len())..].to_vec()),
                    env,
                    budget,
                    depth + 1,
                )?;
                rest_seen = true;
                k += 1;
                state = State::Rest;
            }
            Some("&key") => {
                rest_seen = true;
                state = State::Key;
            }
            Some("&allow-other-keys") => {}
            Some("&aux") => state = State::Aux,
            _ => match state {
                State::Required => {
                    bind(p, args.get(next)?, env, budget, depth + 1)?;
                    next += 1;
                }
                State::Optional => {
                    optional(p, args.get(next), env, budget, depth)?;
                    next += 1;
                }
                State::Key => key(p, &args[next.min(args.len())..], env, budget, depth)?,
                State::Aux => {
                    let (var, init) = var_and_init(p)?;
                    let v =
                        init.map_or(Some(Val::sym("nil")), |i| eval(i, env, budget, depth + 1))?;
                    bind(var, &v, env, budget, depth + 1)?;
                }
                State::Rest => return None,
            },
        }
    }
    if let Some(tail) = tail {
        bind(
            tail,
            &Val::List(args[next.min(args.len())..].to_vec()),
            env,
            budget,
            depth + 1,
        )?;
        rest_seen = true;
    }
    (rest_seen || next >= args.len()).then_some(())
}

/// `var`, or `(var init [supplied-p])`.
fn var_and_init(p: &Val) -> Option<(&Val, Option<&Val>)> {
    match p {
        Val::Sym(_) => Some((p, None)),
        Val::List(items) if !items.is_empty() => Some((&items[0], items.get(1))),
        _ => None,
    }
}

fn optional(
    p: &Val,
    arg: Option<&Val>,
    env: &mut Env,
    budget: &mut Budget,
    depth: usize,
) -> Option<()> {
    let (var, init) = var_and_init(p)?;
    let value = match (arg, init) {
        (Some(a), _) => a.clone(),
        (None, Some(i)) => eval(i, env, budget, depth + 1)?,
        (None, None) => Val::sym("nil"),
    };
    bind(var, &value, env, budget, depth + 1)?;
    supplied(p, arg.is_some(), env);
    Some(())
}

/// `&key` parameter `p` against the arguments left (a property list).
fn key(p: &Val, plist: &[Val], env: &mut Env, budget: &mut Budget, depth: usize) -> Option<()> {
    let (spec, init) = var_and_init(p)?;
    // `((:keyword var) ...)` or `var`.
    let (keyword, var) = match spec {
        Val::List(kv) if kv.len() == 2 => (kv[0].symbol_name()?, &kv[1]),
        _ => (spec.symbol_name()?, spec),
    };
    budget.spend(plist.len())?;
    let mut found = None;
    for pair in plist.chunks(2) {
        match &pair[0] {
            Val::Sym(w) if w.name == keyword => {
                found = Some(pair.get(1).cloned().unwrap_or(Val::Unknown));
                break;
            }
            Val::Sym(_) => {}
            // A key not known: this one may be it.
            _ => {
                found = Some(Val::Unknown);
                break;
            }
        }
    }
    let given = found.is_some();
    let value = match (found, init) {
        (Some(v), _) => v,
        (None, Some(i)) => eval(i, env, budget, depth + 1)?,
        (None, None) => Val::sym("nil"),
    };
    bind(var, &value, env, budget, depth + 1)?;
    supplied(p, given, env);
    Some(())
}

/// The supplied-p variable of `(var init svar)`.
fn supplied(p: &Val, given: bool, env: &mut Env) {
    if let Val::List(items) = p {
        if let Some(name) = items.get(2).and_then(Val::symbol_name) {
            env.bind(name, Val::sym(if given { "t" } else { "nil" }));
        }
    }
}

/// Binds every variable of `pattern` to [`Val::Unknown`].
fn unknown_all(pattern: &Val, env: &mut Env, budget: &mut Budget, depth: usize) -> Option<()> {
    budget.spend(1)?;
    if depth > super::datum::MAX_DEPTH {
        return None;
    }
    match pattern {
        Val::Sym(w) if !w.name.starts_with('&') && !pattern.is_nil() => {
            env.bind(&w.name, Val::Unknown);
        }
        Val::List(items) => {
            for item in items {
                // `(var init svar)` after `&optional`/`&key`: the variable and svar.
                unknown_all(item, env, budget, depth + 1)?;
            }
        }
        Val::Dotted(items, tail) => {
            for item in items {
                unknown_all(item, env, budget, depth + 1)?;
            }
            unknown_all(tail, env, budget, depth + 1)?;
        }
        _ => {}
    }
    Some(())
}
