//! Variables and control: `let`, `let*`, `setq`/`setf` (of local variables; another
//! place assigns nothing and makes the local variables it names unknown), `push`, `pop`,
//! `incf`, `decf`, `if`, `when`, `unless`, `progn`, `cond`, `case`/`ecase` (keys compared
//! with `eql`), `and`, `or`, `dolist`, `dotimes`, `do`, `do*`. A test whose value is
//! unknown makes the form's value unknown. Each iteration is a step of the budget, so a
//! loop that does not end spends it.

use super::super::datum::Val;
use super::super::{Budget, Env};
use super::{exec, is_word, lists, numbers, progn, truth, Saved};
use compact_str::ToCompactString;

pub(crate) fn is_form(operator: &str) -> bool {
    is_assignment(operator)
        || matches!(
            operator,
            "let"
                | "let*"
                | "if"
                | "when"
                | "unless"
                | "progn"
                | "cond"
                | "case"
                | "ecase"
                | "typecase"
                | "etypecase"
                | "destructuring-bind"
                | "and"
                | "or"
                | "dolist"
                | "dotimes"
                | "do"
                | "do*"
        )
}

/// Whether `operator` assigns a variable.
pub(crate) fn is_assignment(operator: &str) -> bool {
    matches!(operator, "setq" | "setf" | "push" | "pop" | "incf" | "decf")
}

/// [`is_assignment`], and the other operators that assign a place.
pub(crate) fn is_assignment_like(operator: &str) -> bool {
    is_assignment(operator)
        || matches!(
            operator,
            "pushnew" | "shiftf" | "rotatef" | "psetf" | "psetq"
        )
}

/// An unknown value, after which the local variables that `forms` may assign are unknown
/// too (a branch not known to be taken, or not, may have assigned them).
pub(crate) fn unknown_after(forms: &[Val], env: &mut Env) -> Option<Val> {
    let mut stack: Vec<&Val> = forms.iter().collect();
    while let Some(v) = stack.pop() {
        if let Some(op) = v.head().filter(|h| is_assignment(h) || *h == "loop") {
            let args = v.items().unwrap_or_default();
            let places: Vec<&Val> = match op {
                "setq" | "setf" => args.iter().skip(1).step_by(2).collect(),
                "push" => args.get(2).into_iter().collect(),
                "loop" => args.iter().skip(1).collect(),
                _ => args.get(1).into_iter().collect(),
            };
            for p in places {
                if let Some(name) = p.symbol_name() {
                    if env.vars.contains_key(name) {
                        env.bind(name, Val::Unknown);
                    }
                }
            }
        }
        stack.extend(v.children());
    }
    Some(Val::Unknown)
}

fn nil() -> Val {
    Val::sym("nil")
}

/// The value of `(operator args...)`; `None` once the budget is spent. When it is
/// unknown, so are the local variables its forms may assign.
pub(crate) fn value(
    operator: &str,
    args: &[Val],
    env: &mut Env,
    budget: &mut Budget,
    depth: usize,
) -> Option<Val> {
    match compute(operator, args, env, budget, depth)? {
        Val::Unknown => unknown_after(args, env),
        v => Some(v),
    }
}

fn compute(
    operator: &str,
    args: &[Val],
    env: &mut Env,
    budget: &mut Budget,
    depth: usize,
) -> Option<Val> {
    match operator {
        "let" | "let*" => let_(operator == "let*", args, env, budget, depth),
        "setq" | "setf" => {
            let mut last = nil();
            for pair in args.chunks(2) {
                let [place, form] = pair else {
                    return Some(Val::Unknown);
                };
                last = exec(form, env, budget, depth)?;
                if !super::places::assign(place, &last, env, budget, depth)? {
                    assign(place, last.clone(), env);
                }
            }
            Some(last)
        }
        "push" => {
            let [item, place] = args else {
                return Some(Val::Unknown);
            };
            let item = exec(item, env, budget, depth)?;
            let old = exec(place, env, budget, depth)?;
            let new = match old {
                Val::Unknown => Val::Unknown,
                old => lists::cons(item, old),
            };
            assign(place, new.clone(), env);
            Some(new)
        }
        "pop" => {
            let [place] = args else {
                return Some(Val::Unknown);
            };
            let old = exec(place, env, budget, depth)?;
            let (first, rest) = lists::split(&old).unwrap_or((Val::Unknown, Val::Unknown));
            assign(place, rest, env);
            Some(first)
        }
        "incf" | "decf" => {
            let (place, delta) = match args {
                [p] => (p, Val::Atom("1".into())),
                [p, d] => (p, exec(d, env, budget, depth)?),
                _ => return Some(Val::Unknown),
            };
            let old = exec(place, env, budget, depth)?;
            let op = if operator == "incf" { "+" } else { "-" };
            let new = numbers::call(op, &[old, delta]).unwrap_or(Val::Unknown);
            assign(place, new.clone(), env);
            Some(new)
        }
        "progn" => progn(args, env, budget, depth),
        "if" => match args {
            [test, then, rest @ ..] if rest.len() <= 1 => {
                match truth(&exec(test, env, budget, depth)?) {
                    Some(true) => exec(then, env, budget, depth),
                    Some(false) => progn(rest, env, budget, depth),
                    None => unknown_after(args, env),
                }
            }
            _ => Some(Val::Unknown),
        },
        "when" | "unless" => {
            let Some((test, body)) = args.split_first() else {
                return Some(Val::Unknown);
            };
            match truth(&exec(test, env, budget, depth)?) {
                Some(t) if t == (operator == "when") => progn(body, env, budget, depth),
                Some(_) => Some(nil()),
                None => unknown_after(body, env),
            }
        }
        "and" | "or" => {
            let mut last = Val::sym(if operator == "and" { "t" } else { "nil" });
            for form in args {
                last = exec(form, env, budget, depth)?;
                match truth(&last) {
                    None => return unknown_after(args, env),
                    Some(t) if t != (operator == "and") => return Some(last),
                    Some(_) => {}
                }
            }
            Some(last)
        }
        "cond" => {
            for clause in args {
                let Some((test, body)) = clause.items().and_then(|c| c.split_first()) else {
                    return unknown_after(args, env);
                };
                let t = exec(test, env, budget, depth)?;
                match truth(&t) {
                    None => return unknown_after(args, env),
                    Some(true) if body.is_empty() => return Some(t),
                    Some(true) => return progn(body, env, budget, depth),
                    Some(false) => {}
                }
            }
            Some(nil())
        }
        "case" | "ecase" => case(operator == "ecase", args, env, budget, depth),
        "typecase" | "etypecase" => typecase(operator == "etypecase", args, env, budget, depth),
        "destructuring-bind" => destructuring_bind(args, env, budget, depth),
        "dolist" | "dotimes" => dolist(operator == "dolist", args, env, budget, depth),
        "do" | "do*" => do_(operator == "do*", args, env, budget, depth),
        _ => Some(Val::Unknown),
    }
}

/// Assigns `value` to the local variable `place`; a place that is not one assigns
/// nothing, but the local variables it names may have changed inside: unknown.
fn assign(place: &Val, value: Val, env: &mut Env) {
    if let Some(name) = place.symbol_name() {
        if env.vars.contains_key(name) {
            env.bind(name, value);
        }
        return;
    }
    let mut stack = vec![place];
    while let Some(v) = stack.pop() {
        match v.symbol_name() {
            Some(name) if env.vars.contains_key(name) => env.bind(name, Val::Unknown),
            _ => stack.extend(v.children()),
        }
    }
}

/// `(let (bindings...) body...)` and `let*`: the variables bound for the body only.
fn let_(
    sequential: bool,
    args: &[Val],
    env: &mut Env,
    budget: &mut Budget,
    depth: usize,
) -> Option<Val> {
    let Some((bindings, body)) = args.split_first() else {
        return Some(Val::Unknown);
    };
    let Some(bindings) = bindings.items() else {
        return Some(Val::Unknown);
    };
    let mut pairs = Vec::with_capacity(bindings.len());
    for b in bindings {
        let (var, init) = match b {
            Val::Sym(_) => (b, None),
            _ => match b.items() {
                Some([var, rest @ ..]) if rest.len() <= 1 => (var, rest.first()),
                _ => return Some(Val::Unknown),
            },
        };
        let Some(name) = var.symbol_name() else {
            return Some(Val::Unknown);
        };
        pairs.push((name, init));
    }
    let names: Vec<&str> = pairs.iter().map(|(n, _)| *n).collect();
    let saved = Saved::of(env, &names);
    bind(sequential, pairs, env, budget, depth)?;
    let result = progn(skip_declarations(body), env, budget, depth);
    saved.restore(env);
    result
}

/// A body without its leading `declare` forms.
fn skip_declarations(body: &[Val]) -> &[Val] {
    let n = body
        .iter()
        .take_while(|f| f.head() == Some("declare"))
        .count();
    &body[n..]
}

/// `(case key clauses...)`: the first clause whose key (or one of whose keys) is `eql` to
/// the key's value; `otherwise`/`t` last. `ecase` without a match is unknown (an error).
fn case(
    exhaustive: bool,
    args: &[Val],
    env: &mut Env,
    budget: &mut Budget,
    depth: usize,
) -> Option<Val> {
    let Some((key, clauses)) = args.split_first() else {
        return Some(Val::Unknown);
    };
    let key = exec(key, env, budget, depth)?;
    if matches!(key, Val::Unknown) {
        return unknown_after(clauses, env);
    }
    let matches = |keys: &Val| {
        Some(
            if !exhaustive && (is_word(keys, "otherwise") || keys.is_symbol("t")) {
                true
            } else {
                match keys {
                    Val::List(ks) => ks.iter().any(|k| lists::eql(&key, k) == Some(true)),
                    k => lists::eql(&key, k) == Some(true),
                }
            },
        )
    };
    first_clause(exhaustive, clauses, &matches, env, budget, depth)
}

/// `(typecase key (TYPE body...) ...)`, `etypecase`: the first clause whose type the
/// key's value is of ([`of_type`]); unknown at a type not known here (a later clause
/// cannot be chosen past it) and, for `etypecase`, when no clause is.
fn typecase(
    exhaustive: bool,
    args: &[Val],
    env: &mut Env,
    budget: &mut Budget,
    depth: usize,
) -> Option<Val> {
    let Some((key, clauses)) = args.split_first() else {
        return Some(Val::Unknown);
    };
    let key = exec(key, env, budget, depth)?;
    let matches = |ty: &Val| match !exhaustive && is_word(ty, "otherwise") {
        true => Some(true),
        false => of_type(&key, ty),
    };
    first_clause(exhaustive, clauses, &matches, env, budget, depth)
}

/// The body of the first of `case`-like `clauses` whose head `matches` (`None`: not known
/// here, so neither is the value); without one, `nil`, or unknown when `exhaustive`
/// (`ecase`, `etypecase`: an error).
fn first_clause(
    exhaustive: bool,
    clauses: &[Val],
    matches: &dyn Fn(&Val) -> Option<bool>,
    env: &mut Env,
    budget: &mut Budget,
    depth: usize,
) -> Option<Val> {
    for clause in clauses {
        let Some((head, body)) = clause.items().and_then(|c| c.split_first()) else {
            return Some(Val::Unknown);
        };
        budget.spend(head.size())?;
        match matches(head) {
            None => return unknown_after(clauses, env),
            Some(true) => return progn(body, env, budget, depth),
            Some(false) => {}
        }
    }
    Some(if exhaustive { Val::Unknown } else { nil() })
}

/// `(destructuring-bind PATTERN form body...)` for a pattern of variables only (a list,
/// dotted or not, of symbols; no lambda-list keywords): bound as `loop` destructures.
fn destructuring_bind(
    args: &[Val],
    env: &mut Env,
    budget: &mut Budget,
    depth: usize,
) -> Option<Val> {
    let [pattern, form, body @ ..] = args else {
        return Some(Val::Unknown);
    };
    // Reading the pattern, binding and restoring its variables cost its size at each
    // evaluation (a `dolist` over a long pattern): charged, as the form and body are.
    budget.spend(pattern.size())?;
    let keyword = |n: &&str| n.starts_with('&');
    let names = super::destructure::names(pattern);
    if !super::destructure::is_pattern(pattern) || names.iter().any(keyword) {
        return Some(Val::Unknown);
    }
    let value = exec(form, env, budget, depth)?;
    let saved = Saved::of(env, &names);
    super::destructure::bind(pattern, value, env);
    let result = progn(skip_declarations(body), env, budget, depth);
    saved.restore(env);
    result
}

/// Whether `v` is of the type `ty`, for the type names a macro's dispatch on its
/// arguments uses (`string`, `symbol`, `keyword`, `null`, `list`, `cons`, `integer`,
/// `number`, `character`, `t`, and `(or ...)` of them); `None` for an unknown value or
/// another type.
fn of_type(v: &Val, ty: &Val) -> Option<bool> {
    if matches!(v, Val::Unknown) {
        return None;
    }
    if let Some([head, types @ ..]) = ty.items() {
        if !head.is_symbol("or") {
            return None;
        }
        for t in types {
            if of_type(v, t)? {
                return Some(true);
            }
        }
        return Some(false);
    }
    let cons = matches!(
        v,
        Val::Dotted(..)
            | Val::Quote(_)
            | Val::Backquote(_)
            | Val::Comma(_)
            | Val::Splice(_)
            | Val::Function(_)
    ) || matches!(v, Val::List(items) if !items.is_empty());
    let atom_text = match v {
        Val::Atom(a) => Some(a.as_str()),
        _ => None,
    };
    let integer = numbers::int(v).is_some();
    Some(match ty.symbol_name()? {
        "t" => true,
        "string" | "simple-string" => matches!(v, Val::Str(_)),
        "symbol" => matches!(v, Val::Sym(_)) || v.is_nil(),
        "keyword" => v.is_keyword(),
        "null" => v.is_nil(),
        "list" => cons || v.is_nil(),
        "cons" => cons,
        "atom" => !cons,
        "integer" | "fixnum" => integer,
        "number" | "real" | "rational" => {
            let digits = |a: &str| a.bytes().any(|c| c.is_ascii_digit());
            integer || atom_text.is_some_and(|a| digits(a) && a.parse::<f64>().is_ok())
        }
        "character" => atom_text.is_some_and(|a| a.starts_with("#\\")),
        _ => return None,
    })
}

/// `(dolist (var list [result]) body...)` and `(dotimes (var count [result]) body...)`.
fn dolist(
    over_list: bool,
    args: &[Val],
    env: &mut Env,
    budget: &mut Budget,
    depth: usize,
) -> Option<Val> {
    let Some((spec, body)) = args.split_first() else {
        return Some(Val::Unknown);
    };
    let Some([var, source, result @ ..]) = spec.items() else {
        return Some(Val::Unknown);
    };
    let (Some(name), true) = (var.symbol_name(), result.len() <= 1) else {
        return Some(Val::Unknown);
    };
    let source = exec(source, env, budget, depth)?;
    let items: Vec<Val> = if over_list {
        match source.items() {
            Some(items) => items.to_vec(),
            None => return Some(Val::Unknown),
        }
    } else {
        match numbers::int(&source) {
            // Each iteration is a step: a count past the budget spends it.
            Some(n) if n >= 0 && (n as u128) <= budget.steps as u128 => {
                (0..n).map(|k| Val::Atom(k.to_compact_string())).collect()
            }
            Some(n) if n >= 0 => return None,
            _ => return Some(Val::Unknown),
        }
    };
    let saved = Saved::of(env, &[name]);
    let body = skip_declarations(body);
    for item in items {
        budget.spend(1)?;
        env.bind(name, item);
        progn(body, env, budget, depth)?;
    }
    let count = numbers::int(&source).and_then(numbers::num);
    env.bind(
        name,
        if over_list {
            nil()
        } else {
            count.unwrap_or(Val::Unknown)
        },
    );
    let value = progn(result, env, budget, depth);
    saved.restore(env);
    value
}

/// `(do ((var init [step])...) (end-test result...) body...)`; `do*` binds and steps in
/// sequence.
fn do_(
    sequential: bool,
    args: &[Val],
    env: &mut Env,
    budget: &mut Budget,
    depth: usize,
) -> Option<Val> {
    let [specs, end, body @ ..] = args else {
        return Some(Val::Unknown);
    };
    let (Some(specs), Some((test, result))) =
        (specs.items(), end.items().and_then(|e| e.split_first()))
    else {
        return Some(Val::Unknown);
    };
    let mut vars: Vec<(&str, Option<&Val>, Option<&Val>)> = Vec::with_capacity(specs.len());
    for s in specs {
        match s {
            Val::Sym(w) => vars.push((&w.name, None, None)),
            _ => match s.items() {
                Some([v, rest @ ..]) if rest.len() <= 2 => {
                    let Some(name) = v.symbol_name() else {
                        return Some(Val::Unknown);
                    };
                    vars.push((name, rest.first(), rest.get(1)));
                }
                _ => return Some(Val::Unknown),
            },
        }
    }
    let names: Vec<&str> = vars.iter().map(|v| v.0).collect();
    let saved = Saved::of(env, &names);
    let value = do_loop(
        sequential,
        &vars,
        test,
        result,
        skip_declarations(body),
        env,
        budget,
        depth,
    );
    saved.restore(env);
    value
}

/// Binds each name to its form's value (`nil` without one), in sequence (`let*`, `do*`)
/// or all at once after every value is known (`let`, `do`).
fn bind<'a>(
    sequential: bool,
    forms: impl IntoIterator<Item = (&'a str, Option<&'a Val>)>,
    env: &mut Env,
    budget: &mut Budget,
    depth: usize,
) -> Option<()> {
    let mut values = Vec::new();
    for (name, form) in forms {
        let value = match form {
            Some(form) => exec(form, env, budget, depth)?,
            None => nil(),
        };
        if sequential {
            env.bind(name, value);
        } else {
            values.push((name, value));
        }
    }
    for (name, value) in values {
        env.bind(name, value);
    }
    Some(())
}

type DoVar<'a> = (&'a str, Option<&'a Val>, Option<&'a Val>);

#[allow(clippy::too_many_arguments)]
fn do_loop(
    sequential: bool,
    vars: &[DoVar],
    test: &Val,
    result: &[Val],
    body: &[Val],
    env: &mut Env,
    budget: &mut Budget,
    depth: usize,
) -> Option<Val> {
    // Each round: the values of the forms (init, then step) bound in sequence or at once.
    let mut first = true;
    loop {
        budget.spend(1)?;
        // A variable without a step keeps its value after the first round.
        let forms = vars
            .iter()
            .filter_map(|(name, init, step)| match (first, step) {
                (true, _) => Some((*name, *init)),
                (false, Some(step)) => Some((*name, Some(*step))),
                (false, None) => None,
            });
        bind(sequential, forms, env, budget, depth)?;
        first = false;
        match truth(&exec(test, env, budget, depth)?) {
            None => {
                unknown_after(body, env);
                return unknown_after(result, env);
            }
            Some(true) => return progn(result, env, budget, depth),
            Some(false) => {}
        }
        progn(body, env, budget, depth)?;
    }
}
