//! A bounded evaluator of a closed set of pure Common Lisp forms over the reader's data
//! (docs/find.md#definitions-made-by-the-projects-own-macros), for the computing code of
//! a macro, of a project helper function or of a read-time `#.` form: local variables
//! (`let`, `let*`, and `setq`/`setf`/`push`/`pop`/`incf`/`decf` of them), control
//! (`control.rs`: `cond`, `case`, `and`, `or`, `dolist`, `dotimes`, `do`, `do*` ...),
//! the `loop` clauses of `loops.rs`, and the functions of `numbers.rs` and `lists.rs`.
//! Each form is a step of the expansion's budget (`super::Budget`), each iteration one
//! more; an operator outside the set is computed as `template.rs` computes it (the
//! builders, a local or project function) or is unknown. No I/O, no global state: an
//! assignment of a name that is not a local variable changes nothing.

pub(crate) mod alexandria;
pub(crate) mod cffi;
pub(crate) mod code;
pub(crate) mod context;
pub(crate) mod control;
pub(crate) mod destructure;
pub(crate) mod lists;
pub(crate) mod loops;
pub(crate) mod numbers;
pub(crate) mod places;
pub(crate) mod values;

use super::datum::{Val, MAX_DEPTH};
use super::template;
use super::{Budget, Env};
use compact_str::CompactString;
use std::rc::Rc;

/// How deep forms may nest in evaluation (the data's depth bounds it already; this bounds
/// a value computed from a value).
const MAX_EVAL_DEPTH: usize = 4 * MAX_DEPTH;

/// Whether `operator` is a function of values computed here.
pub(crate) fn is_function(operator: &str) -> bool {
    numbers::is_function(operator)
        || lists::is_function(operator)
        || operator == "ldb"
        || operator == "values"
        || alexandria::is_function(operator)
        || cffi::is_function(operator)
}

/// Whether `operator` is a form of this evaluator that needs the variables (binding,
/// assigning, control).
pub(crate) fn is_form(operator: &str) -> bool {
    control::is_form(operator)
        || operator == "loop"
        || values::is_form(operator)
        || alexandria::is_form(operator)
}

/// The value of a function of `is_function` on evaluated arguments; unknown when it
/// cannot be computed.
pub(crate) fn call(operator: &str, args: &[Val]) -> Val {
    let value = match operator {
        "ldb" => match args {
            [spec, n] => numbers::ldb(spec, n),
            _ => None,
        },
        "values" => Some(args.first().cloned().unwrap_or_else(|| Val::sym("nil"))),
        _ if numbers::is_function(operator) => numbers::call(operator, args),
        _ => lists::call(operator, args),
    };
    value.unwrap_or(Val::Unknown)
}

/// [`call`], charged to `budget` for the nodes it makes that its arguments do not hold
/// (`make-list`'s elements); `None` once the budget is spent.
pub(crate) fn call_charged(operator: &str, args: &[Val], budget: &mut Budget) -> Option<Val> {
    if alexandria::is_function(operator) {
        return Some(alexandria::parse_body(args, budget));
    }
    if cffi::is_function(operator) {
        return Some(cffi::call(operator, args, budget));
    }
    if operator == "remove-duplicates" {
        // Each element is compared with the later ones: a step per 16 comparisons.
        let n = args.first().and_then(Val::items).map_or(0, <[Val]>::len);
        budget.spend(n.saturating_mul(n) / 16)?;
    }
    let value = call(operator, args);
    if operator == "make-list" {
        budget.spend(value.size())?;
    }
    Some(value)
}

/// The value of the form `x` (an [`is_form`] operator's) met by `template::eval`, which
/// holds the variables read-only: evaluated in a copy of them (charged by its number of
/// variables). An assignment there could not reach the caller's variable: unknown.
pub(crate) fn value(x: &Val, env: &Env, budget: &mut Budget, depth: usize) -> Option<Val> {
    if control::is_assignment(x.head().unwrap_or_default()) {
        return Some(Val::Unknown);
    }
    budget.spend(env.vars.len() + 1)?;
    let mut scope = env.clone();
    exec(x, &mut scope, budget, depth)
}

/// The value of `x` with `env`'s local variables assignable; `None` once the budget is
/// spent.
pub(crate) fn exec(x: &Val, env: &mut Env, budget: &mut Budget, depth: usize) -> Option<Val> {
    budget.spend(1)?;
    if depth > MAX_EVAL_DEPTH {
        return Some(Val::Unknown);
    }
    let Some(op) = x.head() else {
        return template::eval(x, env, budget, depth);
    };
    let args = x.items().map(|i| &i[1..]).unwrap_or_default();
    if op == "loop" {
        return loops::value(args, env, budget, depth + 1);
    }
    if control::is_form(op) {
        return control::value(op, args, env, budget, depth + 1);
    }
    if values::is_form(op) {
        return values::bind(args, env, budget, depth + 1);
    }
    if alexandria::is_form(op) {
        return alexandria::value(op, args, env, budget, depth + 1);
    }
    if op == super::enums::KEYWORD_LIST {
        return enum_keywords(args, env, budget);
    }
    let builder = super::builders::is_builder(op);
    if builder || is_function(op) {
        let mut values = Vec::with_capacity(args.len());
        for a in args {
            values.push(exec(a, env, budget, depth + 1)?);
        }
        budget.spend(values.iter().map(Val::size).sum())?;
        if op == "values" {
            return Some(values::returned(values, budget));
        }
        return Some(if builder {
            super::builders::call(op, &values)
        } else {
            call_charged(op, &values, budget)?
        });
    }
    template::eval(x, env, budget, depth)
}

/// `(foreign-enum-keyword-list 'NAME)`: the keywords of the enum the scope declares
/// under that name (`super::enums`), bound as a variable by `read_eval::read_call`;
/// unknown for another argument or an enum not known.
fn enum_keywords(args: &[Val], env: &Env, budget: &mut Budget) -> Option<Val> {
    let [Val::Quote(name)] = args else {
        return Some(Val::Unknown);
    };
    let Some(value) = name
        .symbol_name()
        .and_then(|n| env.get(&super::enums::key(n)))
    else {
        return Some(Val::Unknown);
    };
    budget.spend(value.size())?;
    Some(value.clone())
}

/// The value of the forms of a body in order: the last one's (`nil` for none).
pub(crate) fn progn(body: &[Val], env: &mut Env, budget: &mut Budget, depth: usize) -> Option<Val> {
    let mut last = Val::sym("nil");
    for form in body {
        last = exec(form, env, budget, depth)?;
    }
    Some(last)
}

/// The bindings of `names` before a scope binds them, to put back when it ends.
pub(crate) struct Saved(Vec<(CompactString, Option<Rc<Val>>)>);

impl Saved {
    pub(crate) fn of(env: &Env, names: &[&str]) -> Saved {
        Saved(
            names
                .iter()
                .map(|n| (CompactString::new(n), env.vars.get(*n).cloned()))
                .collect(),
        )
    }

    /// Puts the saved bindings back (an assignment of an outer variable inside the scope
    /// stays: it is not one of these names).
    pub(crate) fn restore(self, env: &mut Env) {
        for (name, old) in self.0.into_iter().rev() {
            match old {
                Some(v) => env.vars.insert(name, v),
                None => env.vars.remove(name.as_str()),
            };
        }
    }
}

/// Whether `v` is the loop or `do` keyword `name` (loop keywords are compared by name,
/// in any package).
pub(crate) fn is_word(v: &Val, name: &str) -> bool {
    matches!(v, Val::Sym(w) if w.name == name)
}

/// Whether a value is true: `None` when it is unknown.
pub(crate) fn truth(v: &Val) -> Option<bool> {
    match v {
        Val::Unknown => None,
        _ => Some(!v.is_nil()),
    }
}

#[cfg(test)]
mod tests;
