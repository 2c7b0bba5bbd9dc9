//! `setf` of a place inside a local variable's list (clx's `(setf (elt slot-names i)
//! (pop slot))`): `elt`, `nth`, `car`/`first`..`fifth` and `getf` of a variable whose
//! value is a known list give the variable a new list with that element replaced (or,
//! for `getf`, the property added in front when missing, as `setf getf` does). Any other
//! place, or a variable whose value or index is unknown, is left to `control.rs` (the
//! variables it names become unknown).

use super::super::datum::Val;
use super::super::{Budget, Env};
use super::exec;
use super::lists::eql;
use super::numbers::int;
use compact_str::ToCompactString;

/// Assigns `value` to `place` when it is one of these places of a local variable;
/// `Some(false)` when it is none (nothing done); `None` once the budget is spent.
pub(crate) fn assign(
    place: &Val,
    value: &Val,
    env: &mut Env,
    budget: &mut Budget,
    depth: usize,
) -> Option<bool> {
    let (Some(op), Some(args)) = (place.head(), place.items()) else {
        return Some(false);
    };
    let (var, index) = match (op, &args[1..]) {
        ("elt", [var, k]) => (var, Some(k)),
        ("nth", [k, var]) => (var, Some(k)),
        ("getf", [var, _]) => (var, None),
        ("car" | "first", [var]) => (var, None),
        ("second" | "third" | "fourth" | "fifth", [var]) => (var, None),
        _ => return Some(false),
    };
    let Some(name) = var.symbol_name().filter(|n| env.vars.contains_key(*n)) else {
        return Some(false);
    };
    let new = match op {
        "getf" => {
            let indicator = exec(&args[2], env, budget, depth)?;
            put_property(env.get(name), &indicator, value)
        }
        _ => {
            let k = match index {
                Some(k) => exec(k, env, budget, depth)?,
                None => Val::Atom(ordinal(op).to_compact_string()),
            };
            replace_nth(env.get(name), &k, value)
        }
    };
    budget.spend(new.as_ref().map_or(1, Val::size))?;
    env.bind(name, new.unwrap_or(Val::Unknown));
    Some(true)
}

/// The index `car`, `first` .. `fifth` take.
fn ordinal(op: &str) -> usize {
    ["first", "second", "third", "fourth", "fifth"]
        .iter()
        .position(|o| *o == op)
        .unwrap_or(0)
}

/// `list` with its element `k` replaced by `value`; `None` when unknown or out of range.
fn replace_nth(list: Option<&Val>, k: &Val, value: &Val) -> Option<Val> {
    let k = usize::try_from(int(k)?).ok()?;
    let mut items = list?.items()?.to_vec();
    *items.get_mut(k)? = value.clone();
    Some(Val::List(items))
}

/// The property list `plist` with `indicator`'s value `value`.
fn put_property(plist: Option<&Val>, indicator: &Val, value: &Val) -> Option<Val> {
    let mut items = plist?.items()?.to_vec();
    if items.len() % 2 != 0 {
        return None;
    }
    for k in (0..items.len()).step_by(2) {
        if eql(&items[k], indicator)? {
            items[k + 1] = value.clone();
            return Some(Val::List(items));
        }
    }
    items.splice(0..0, [indicator.clone(), value.clone()]);
    Some(Val::List(items))
}
