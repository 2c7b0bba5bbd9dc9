//! Multiple values: `(values a b ...)` is its first value wherever one value is taken
//! (`nil` for none), and `(multiple-value-bind (vars...) form body...)` binds its
//! variables to the values of `form` when the last thing `form` computed is a `values`
//! (a `values` in tail position, in `form` itself or at the end of a function it calls:
//! lparallel's `(multiple-value-bind (constructor slots-macro) (defslots-names name) ...)`
//! where `defslots-names` ends in `(values (symbolicate ...) (symbolicate ...))`).
//! Otherwise the first variable is bound to the form's value and the others are unknown.
//!
//! The values are handed over beside the value: the last `values` computed records them
//! with the budget left at that moment; every form spends a step when it starts, so when
//! the budget left is still that once `form` is computed, and its value is the first of
//! them, nothing ran after the `values` but forms that passed its value on (a form whose
//! arguments were computed before it, as `(list (values a b))`, spends nothing after
//! them, but its value is another).

use super::super::datum::Val;
use super::super::{Budget, Env};
use super::{exec, progn, Saved};
use std::cell::RefCell;

thread_local! {
    /// The values of the last `values` computed, with the budget left after it.
    static LAST: RefCell<Option<(usize, Vec<Val>)>> = const { RefCell::new(None) };
}

pub(crate) fn is_form(operator: &str) -> bool {
    operator == "multiple-value-bind"
}

/// The value of `(values ...)` on its evaluated arguments (its first), recording them all
/// for a `multiple-value-bind` whose form ends here.
pub(crate) fn returned(values: Vec<Val>, budget: &Budget) -> Val {
    let first = values.first().cloned().unwrap_or_else(|| Val::sym("nil"));
    LAST.with(|last| *last.borrow_mut() = Some((budget.steps, values)));
    first
}

/// Forgets the values recorded: called before a `multiple-value-bind`'s form is computed.
pub(crate) fn start() {
    LAST.with(|last| last.borrow_mut().take());
}

/// The variables of a `multiple-value-bind` (its first argument) with their values, its
/// form having just been computed to `value`; `None` when `vars` is not a list of
/// symbols.
pub(crate) fn bindings(vars: &Val, value: Val, budget: &Budget) -> Option<Vec<(String, Val)>> {
    let names = vars
        .items()?
        .iter()
        .map(|v| v.symbol_name().map(str::to_string))
        .collect::<Option<Vec<String>>>()?;
    let recorded = LAST
        .with(|last| last.borrow_mut().take())
        .filter(|(left, values)| {
            *left == budget.steps && values.first().unwrap_or(&Val::sym("nil")) == &value
        })
        .map(|(_, values)| values);
    let value_of = |k: usize| match &recorded {
        Some(values) => values.get(k).cloned().unwrap_or_else(|| Val::sym("nil")),
        None if k == 0 => value.clone(),
        None => Val::Unknown,
    };
    Some(
        names
            .into_iter()
            .enumerate()
            .map(|(k, name)| (name, value_of(k)))
            .collect(),
    )
}

/// `(multiple-value-bind (vars...) form body...)` computed by the evaluator: the body's
/// value with the variables bound for it only.
pub(crate) fn bind(args: &[Val], env: &mut Env, budget: &mut Budget, depth: usize) -> Option<Val> {
    let [vars, form, body @ ..] = args else {
        return Some(Val::Unknown);
    };
    start();
    let value = exec(form, env, budget, depth)?;
    let Some(pairs) = bindings(vars, value, budget) else {
        return Some(Val::Unknown);
    };
    let names: Vec<&str> = pairs.iter().map(|(n, _)| n.as_str()).collect();
    let saved = Saved::of(env, &names);
    for (name, value) in &pairs {
        env.bind(name, value.clone());
    }
    let body = &body[body
        .iter()
        .take_while(|f| f.head() == Some("declare"))
        .count()..];
    let result = progn(body, env, budget, depth);
    saved.restore(env);
    result
}
