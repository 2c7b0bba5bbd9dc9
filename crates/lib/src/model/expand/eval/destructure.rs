//! `loop`'s destructuring of a variable clause's value (`for (name . options) in slots`,
//! `for (key value) on plist by #'cddr`, `for (nil . plist) in slots`): each symbol of
//! the pattern is bound to the part of the value at its place; `nil` binds nothing; a
//! part the value lacks is `nil`; a part of an unknown value is unknown. Walked with an
//! explicit stack.

use super::super::datum::Val;
use super::super::Env;

/// Whether `v` can be a loop variable: a symbol, or a list (proper or dotted) of them
/// at any depth.
pub(crate) fn is_pattern(v: &Val) -> bool {
    let mut stack = vec![v];
    while let Some(p) = stack.pop() {
        match p {
            Val::Sym(_) => {}
            Val::List(items) => stack.extend(items),
            Val::Dotted(items, tail) => {
                stack.extend(items);
                stack.push(tail);
            }
            _ => return false,
        }
    }
    true
}

/// The variables `pattern` binds.
pub(crate) fn names(pattern: &Val) -> Vec<&str> {
    let mut out = Vec::new();
    let mut stack = vec![pattern];
    while let Some(p) = stack.pop() {
        match p {
            Val::Sym(_) if p.is_nil() => {}
            Val::Sym(w) => out.push(w.name.as_str()),
            Val::List(items) => stack.extend(items),
            Val::Dotted(items, tail) => {
                stack.extend(items);
                stack.push(tail);
            }
            _ => {}
        }
    }
    out
}

/// Binds the variables of `pattern` to the parts of `value`.
pub(crate) fn bind(pattern: &Val, value: Val, env: &mut Env) {
    let mut stack = vec![(pattern, value)];
    while let Some((p, v)) = stack.pop() {
        let (items, tail) = match p {
            Val::Sym(_) if p.is_nil() => continue,
            Val::Sym(w) => {
                env.bind(&w.name, v);
                continue;
            }
            Val::List(items) => (items.as_slice(), None),
            Val::Dotted(items, tail) => (items.as_slice(), Some(&**tail)),
            _ => continue,
        };
        let mut parts = Vec::with_capacity(items.len());
        let rest = take(v, items.len(), &mut parts);
        for (item, part) in items.iter().zip(parts) {
            stack.push((item, part));
        }
        if let Some(tail) = tail {
            stack.push((tail, rest));
        }
    }
}

/// The first `k` parts of `v` into `out`, each as `car` after `cdr`s gives it (`nil` past
/// the end of a list, unknown past an atom or in an unknown value), and what is left:
/// moved out of `v` once. Taking them one at a time copied the rest of the list at each,
/// the square of its length.
fn take(v: Val, k: usize, out: &mut Vec<Val>) -> Val {
    let mut rest = v;
    while out.len() < k {
        let wanted = k - out.len();
        rest = match rest {
            Val::List(mut items) => {
                let more = items.split_off(wanted.min(items.len()));
                out.extend(items);
                if more.is_empty() {
                    Val::sym("nil")
                } else {
                    Val::List(more)
                }
            }
            Val::Dotted(mut items, tail) if !items.is_empty() => {
                let more = items.split_off(wanted.min(items.len()));
                out.extend(items);
                if more.is_empty() {
                    *tail
                } else {
                    Val::Dotted(more, tail)
                }
            }
            v if v.is_nil() => {
                out.resize(k, Val::sym("nil"));
                v
            }
            _ => {
                out.resize(k, Val::Unknown);
                Val::Unknown
            }
        };
    }
    rest
}
