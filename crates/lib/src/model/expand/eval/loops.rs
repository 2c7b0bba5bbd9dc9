//! The `loop` clauses computed: `with var = form`; `for`/`as var` `from`/`upfrom`/
//! `downfrom` .. `to`/`upto`/`below`/`downto`/`above` .. `by`, `in list [by #'cddr]`,
//! `on list`, `across vector`, `= form [then form]`; `repeat`, `while`, `until`;
//! `collect`/`append`/`nconc` (and their `-ing` forms) `[into var]`, `do`, `return`;
//! `when`/`if`/`unless` with `and` and `else`, `end`; `finally`; the variable of `in`,
//! `on` and `=` may be a destructuring pattern (`destructure.rs`). Any other clause
//! (`being`, `sum`, `initially` ...) makes the loop's value unknown. Each iteration is a step of the budget: a loop that does not end spends it.

use super::super::datum::Val;
use super::super::{Budget, Env};
use super::{destructure, exec, is_word, lists, numbers, progn, truth, Saved};

/// A variable clause, run at the start of each iteration in order.
enum Var<'a> {
    Count {
        name: &'a str,
        from: Option<&'a Val>,
        limit: Option<(&'a Val, Limit)>,
        by: Option<&'a Val>,
        down: bool,
    },
    In {
        /// A variable or a destructuring pattern.
        target: &'a Val,
        list: &'a Val,
        on: bool,
        by_cddr: bool,
    },
    Across {
        name: &'a str,
        vector: &'a Val,
    },
    Equals {
        target: &'a Val,
        first: &'a Val,
        then: Option<&'a Val>,
    },
    Repeat(&'a Val),
}

#[derive(Clone, Copy)]
enum Limit {
    Inclusive,
    Exclusive,
}

/// A main clause.
enum Main<'a> {
    Collect {
        how: &'static str,
        form: &'a Val,
        into: Option<&'a str>,
    },
    Do(&'a [Val]),
    Return(&'a Val),
    While(&'a Val, bool),
    If {
        test: &'a Val,
        negated: bool,
        then: Vec<Main<'a>>,
        otherwise: Vec<Main<'a>>,
    },
}

struct Parsed<'a> {
    with: Vec<(&'a str, Option<&'a Val>)>,
    vars: Vec<Var<'a>>,
    main: Vec<Main<'a>>,
    finally: Vec<&'a Val>,
}

/// The value of `(loop args...)`: unknown for a clause outside the set; `None` once
/// the budget is spent.
pub(crate) fn value(args: &[Val], env: &mut Env, budget: &mut Budget, depth: usize) -> Option<Val> {
    budget.spend(args.len())?;
    if super::code::assigns_in_template(args) {
        return super::control::unknown_after(args, env);
    }
    let Some(parsed) = parse(args) else {
        return super::control::unknown_after(args, env);
    };
    let mut names: Vec<&str> = parsed.with.iter().map(|w| w.0).collect();
    names.extend(parsed.vars.iter().flat_map(var_names));
    names.extend(collected_into(&parsed.main));
    let saved = Saved::of(env, &names);
    let value = run(&parsed, env, budget, depth);
    saved.restore(env);
    match value? {
        Val::Unknown => super::control::unknown_after(args, env),
        v => Some(v),
    }
}

fn var_names<'a>(v: &Var<'a>) -> Vec<&'a str> {
    match v {
        Var::Count { name, .. } | Var::Across { name, .. } => vec![name],
        Var::In { target, .. } | Var::Equals { target, .. } => destructure::names(target),
        Var::Repeat(_) => Vec::new(),
    }
}

fn collected_into<'a>(main: &[Main<'a>]) -> Vec<&'a str> {
    let mut out = Vec::new();
    for m in main {
        match m {
            Main::Collect { into: Some(n), .. } => out.push(*n),
            Main::If {
                then, otherwise, ..
            } => {
                out.extend(collected_into(then));
                out.extend(collected_into(otherwise));
            }
            _ => {}
        }
    }
    out
}

fn parse(args: &[Val]) -> Option<Parsed<'_>> {
    let mut p = Parsed {
        with: Vec::new(),
        vars: Vec::new(),
        main: Vec::new(),
        finally: Vec::new(),
    };
    let mut k = 0;
    while k < args.len() {
        let word = args[k].symbol_name()?;
        k += 1;
        match word {
            "named" => k += 1,
            "with" => loop {
                let name = args.get(k)?.symbol_name()?;
                if args.get(k + 1).is_some_and(|v| is_word(v, "=")) {
                    p.with.push((name, Some(args.get(k + 2)?)));
                    k += 3;
                } else {
                    p.with.push((name, None));
                    k += 1;
                }
                if !args.get(k).is_some_and(|v| is_word(v, "and")) {
                    break;
                }
                k += 1;
            },
            "for" | "as" => k = parse_for(args, k, &mut p.vars)?,
            "repeat" => {
                p.vars.push(Var::Repeat(args.get(k)?));
                k += 1;
            }
            "finally" => {
                while let Some(f @ Val::List(_)) = args.get(k) {
                    p.finally.push(f);
                    k += 1;
                }
            }
            _ => {
                let (clause, next) = parse_main(args, k - 1)?;
                p.main.push(clause);
                k = next;
            }
        }
    }
    Some(p)
}

/// `for var ...` from `args[k]` (the variable); the index after the clause.
fn parse_for<'a>(args: &'a [Val], mut k: usize, vars: &mut Vec<Var<'a>>) -> Option<usize> {
    let target = args.get(k)?;
    if !destructure::is_pattern(target) {
        return None;
    }
    k += 1;
    let word = args.get(k)?.symbol_name()?;
    // Only `in`, `on` and `=` destructure; the others step one variable.
    let name = match word {
        "in" | "on" | "=" => "",
        _ => target.symbol_name()?,
    };
    match word {
        "in" | "on" => {
            let list = args.get(k + 1)?;
            k += 2;
            let mut by_cddr = false;
            if args.get(k).is_some_and(|v| is_word(v, "by")) {
                let f = match args.get(k + 1)? {
                    Val::Function(f) | Val::Quote(f) => f.symbol_name()?,
                    _ => return None,
                };
                match f {
                    "cdr" => {}
                    "cddr" => by_cddr = true,
                    _ => return None,
                }
                k += 2;
            }
            vars.push(Var::In {
                target,
                list,
                on: word == "on",
                by_cddr,
            });
        }
        "across" => {
            vars.push(Var::Across {
                name,
                vector: args.get(k + 1)?,
            });
            k += 2;
        }
        "=" => {
            let first = args.get(k + 1)?;
            k += 2;
            let then = if args.get(k).is_some_and(|v| is_word(v, "then")) {
                k += 2;
                Some(args.get(k - 1)?)
            } else {
                None
            };
            vars.push(Var::Equals {
                target,
                first,
                then,
            });
        }
        _ => {
            let (mut from, mut limit, mut by, mut down) = (None, None, None, false);
            while let Some(w) = args.get(k).and_then(Val::symbol_name) {
                let form = args.get(k + 1);
                match w {
                    "from" | "upfrom" => from = form,
                    "downfrom" => {
                        from = form;
                        down = true;
                    }
                    "to" | "upto" => limit = Some((form?, Limit::Inclusive)),
                    "below" => limit = Some((form?, Limit::Exclusive)),
                    "downto" => {
                        limit = Some((form?, Limit::Inclusive));
                        down = true;
                    }
                    "above" => {
                        limit = Some((form?, Limit::Exclusive));
                        down = true;
                    }
                    "by" => by = form,
                    _ => break,
                }
                form?;
                k += 2;
            }
            if from.is_none() && limit.is_none() {
                return None;
            }
            vars.push(Var::Count {
                name,
                from,
                limit,
                by,
                down,
            });
        }
    }
    Some(k)
}

/// The main clause at `args[k]`; the index after it.
fn parse_main(args: &[Val], k: usize) -> Option<(Main<'_>, usize)> {
    let word = args.get(k)?.symbol_name()?;
    Some(match word {
        "collect" | "collecting" | "append" | "appending" | "nconc" | "nconcing" => {
            let how = match word {
                "collect" | "collecting" => "collect",
                "append" | "appending" => "append",
                _ => "nconc",
            };
            let form = args.get(k + 1)?;
            if args.get(k + 2).is_some_and(|v| is_word(v, "into")) {
                let into = args.get(k + 3)?.symbol_name()?;
                (
                    Main::Collect {
                        how,
                        form,
                        into: Some(into),
                    },
                    k + 4,
                )
            } else {
                (
                    Main::Collect {
                        how,
                        form,
                        into: None,
                    },
                    k + 2,
                )
            }
        }
        "do" | "doing" => {
            let n = args[k + 1..]
                .iter()
                .take_while(|v| matches!(v, Val::List(_)))
                .count();
            (Main::Do(&args[k + 1..k + 1 + n]), k + 1 + n)
        }
        "return" => (Main::Return(args.get(k + 1)?), k + 2),
        "while" | "until" => (Main::While(args.get(k + 1)?, word == "until"), k + 2),
        "when" | "if" | "unless" => {
            let test = args.get(k + 1)?;
            let (then, mut next) = parse_conjunction(args, k + 2)?;
            let mut otherwise = Vec::new();
            if args.get(next).is_some_and(|v| is_word(v, "else")) {
                let (o, n) = parse_conjunction(args, next + 1)?;
                otherwise = o;
                next = n;
            }
            if args.get(next).is_some_and(|v| is_word(v, "end")) {
                next += 1;
            }
            let negated = word == "unless";
            (
                Main::If {
                    test,
                    negated,
                    then,
                    otherwise,
                },
                next,
            )
        }
        _ => return None,
    })
}

/// `clause {and clause}*` from `args[k]`.
fn parse_conjunction(args: &[Val], mut k: usize) -> Option<(Vec<Main<'_>>, usize)> {
    let mut out = Vec::new();
    loop {
        let (clause, next) = parse_main(args, k)?;
        out.push(clause);
        k = next;
        if !args.get(k).is_some_and(|v| is_word(v, "and")) {
            return Some((out, k));
        }
        k += 1;
    }
}

/// Where an iteration left the loop.
enum Flow {
    Go,
    End,
    Return(Val),
    Unknown,
}

/// What a running loop holds besides its variables: its cursors over lists and vectors,
/// counters, and what its clauses collected.
struct State {
    cursors: Vec<Val>,
    collected: Vec<Val>,
    /// The `into` lists, put into their variables before a form reads them.
    into: Vec<(String, Vec<Val>)>,
    dirty: bool,
}

fn run(p: &Parsed, env: &mut Env, budget: &mut Budget, depth: usize) -> Option<Val> {
    for (name, form) in &p.with {
        let v = match form {
            Some(f) => exec(f, env, budget, depth)?,
            None => Val::sym("nil"),
        };
        env.bind(name, v);
    }
    let mut state = State {
        cursors: vec![Val::Unknown; p.vars.len()],
        collected: Vec::new(),
        into: Vec::new(),
        dirty: false,
    };
    for name in collected_into(&p.main) {
        env.bind(name, Val::sym("nil"));
    }
    let mut first = true;
    loop {
        budget.spend(1)?;
        let flow = match step_vars(p, &mut state, first, env, budget, depth)? {
            Flow::Go => run_main(&p.main, &mut state, env, budget, depth)?,
            other => other,
        };
        first = false;
        match flow {
            Flow::Go => {}
            Flow::End => break,
            Flow::Return(v) => return Some(v),
            Flow::Unknown => return Some(Val::Unknown),
        }
    }
    sync(&mut state, env, budget)?;
    for form in &p.finally {
        if form.head() == Some("return") {
            let value = form.items().and_then(|i| i.get(1));
            return match value {
                Some(v) => exec(v, env, budget, depth),
                None => Some(Val::sym("nil")),
            };
        }
        exec(form, env, budget, depth)?;
    }
    Some(if state.collected.is_empty() {
        Val::sym("nil")
    } else {
        Val::List(state.collected)
    })
}

/// Puts the `into` lists into their variables: a copy, charged by its size (the count
/// of elements let a loop copy a large element thousands of times per step).
fn sync(state: &mut State, env: &mut Env, budget: &mut Budget) -> Option<()> {
    if !state.dirty {
        return Some(());
    }
    for (name, items) in &state.into {
        budget.spend(1 + items.iter().map(Val::size).sum::<usize>())?;
        env.bind(name, Val::List(items.clone()));
    }
    state.dirty = false;
    Some(())
}

/// Initializes (`first`) or steps the variable clauses in order; [`Flow::End`] when one
/// is exhausted.
fn step_vars(
    p: &Parsed,
    state: &mut State,
    first: bool,
    env: &mut Env,
    budget: &mut Budget,
    depth: usize,
) -> Option<Flow> {
    for (k, var) in p.vars.iter().enumerate() {
        if !state.into.is_empty() {
            sync(state, env, budget)?;
        }
        let flow = match var {
            Var::Count {
                name,
                from,
                limit,
                by,
                down,
            } => {
                let by = match by {
                    Some(f) => numbers::int(&exec(f, env, budget, depth)?),
                    None => Some(1),
                };
                let current = if first {
                    match from {
                        Some(f) => numbers::int(&exec(f, env, budget, depth)?),
                        None => Some(0),
                    }
                } else {
                    numbers::int(&state.cursors[k])
                        .zip(by)
                        .map(|(x, b)| if *down { x - b } else { x + b })
                };
                let (Some(current), Some(_)) = (current, by) else {
                    return Some(Flow::Unknown);
                };
                let value = numbers::num(current)?;
                state.cursors[k] = value.clone();
                env.bind(name, value);
                match limit {
                    None => Flow::Go,
                    Some((form, how)) => match numbers::int(&exec(form, env, budget, depth)?) {
                        None => Flow::Unknown,
                        Some(l) => {
                            let inside = match (how, down) {
                                (Limit::Inclusive, false) => current <= l,
                                (Limit::Exclusive, false) => current < l,
                                (Limit::Inclusive, true) => current >= l,
                                (Limit::Exclusive, true) => current > l,
                            };
                            if inside {
                                Flow::Go
                            } else {
                                Flow::End
                            }
                        }
                    },
                }
            }
            Var::In {
                target,
                list,
                on,
                by_cddr,
            } => {
                let rest = if first {
                    exec(list, env, budget, depth)?
                } else {
                    let mut rest = lists::split(&state.cursors[k]).map(|s| s.1);
                    if *by_cddr {
                        rest = rest.and_then(|r| lists::split(&r)).map(|s| s.1);
                    }
                    rest.unwrap_or(Val::Unknown)
                };
                match rest {
                    Val::Unknown => Flow::Unknown,
                    ref r if r.is_nil() => Flow::End,
                    Val::List(_) => {
                        budget.spend(1)?;
                        let value = if *on {
                            rest.clone()
                        } else {
                            lists::split(&rest)?.0
                        };
                        destructure::bind(target, value, env);
                        state.cursors[k] = rest;
                        Flow::Go
                    }
                    _ => Flow::Unknown,
                }
            }
            Var::Across { name, vector } => {
                if first {
                    // A string's characters are not given one by one: a name is made
                    // of whole pieces of text (`pieces.rs`), as for `subseq`.
                    exec(vector, env, budget, depth)?;
                    state.cursors[k] = Val::Unknown;
                } else {
                    state.cursors[k] =
                        lists::split(&state.cursors[k]).map_or(Val::Unknown, |s| s.1);
                }
                match &state.cursors[k] {
                    Val::Unknown => Flow::Unknown,
                    r if r.is_nil() => Flow::End,
                    r => {
                        let value = lists::split(r)?.0;
                        env.bind(name, value);
                        Flow::Go
                    }
                }
            }
            Var::Equals {
                target,
                first: init,
                then,
            } => {
                let form = match (first, then) {
                    (false, Some(t)) => t,
                    _ => init,
                };
                let v = exec(form, env, budget, depth)?;
                destructure::bind(target, v, env);
                Flow::Go
            }
            Var::Repeat(form) => {
                if first {
                    state.cursors[k] = exec(form, env, budget, depth)?;
                }
                match numbers::int(&state.cursors[k]) {
                    None => Flow::Unknown,
                    Some(n) if n <= 0 => Flow::End,
                    Some(n) => {
                        state.cursors[k] = numbers::num(n - 1)?;
                        Flow::Go
                    }
                }
            }
        };
        if !matches!(flow, Flow::Go) {
            return Some(flow);
        }
    }
    Some(Flow::Go)
}

/// Runs the main clauses once, in order.
fn run_main(
    main: &[Main],
    state: &mut State,
    env: &mut Env,
    budget: &mut Budget,
    depth: usize,
) -> Option<Flow> {
    for clause in main {
        sync(state, env, budget)?;
        let flow = match clause {
            Main::Collect { how, form, into } => {
                let v = exec(form, env, budget, depth)?;
                budget.spend(v.size())?;
                let target = match into {
                    None => &mut state.collected,
                    Some(name) => {
                        let at = match state.into.iter().position(|(n, _)| n == name) {
                            Some(at) => at,
                            None => {
                                state.into.push((name.to_string(), Vec::new()));
                                state.into.len() - 1
                            }
                        };
                        state.dirty = true;
                        &mut state.into[at].1
                    }
                };
                if *how == "collect" {
                    target.push(v);
                    Flow::Go
                } else {
                    match v.items() {
                        Some(items) => {
                            target.extend_from_slice(items);
                            Flow::Go
                        }
                        None => Flow::Unknown,
                    }
                }
            }
            Main::Do(forms) => {
                progn(forms, env, budget, depth)?;
                Flow::Go
            }
            Main::Return(form) => Flow::Return(exec(form, env, budget, depth)?),
            Main::While(form, until) => match truth(&exec(form, env, budget, depth)?) {
                None => Flow::Unknown,
                Some(t) if t != *until => Flow::Go,
                Some(_) => Flow::End,
            },
            Main::If {
                test,
                negated,
                then,
                otherwise,
            } => match truth(&exec(test, env, budget, depth)?) {
                None => Flow::Unknown,
                Some(t) if t != *negated => run_main(then, state, env, budget, depth)?,
                Some(_) => run_main(otherwise, state, env, budget, depth)?,
            },
        };
        if !matches!(flow, Flow::Go) {
            return Some(flow);
        }
    }
    Some(Flow::Go)
}
