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
        let mut rest = v;
        for item in items {
            let (first, more) = match &rest {
                Val::Unknown => (Val::Unknown, Val::Unknown),
                r => super::lists::split(r).unwrap_or((Val::Unknown, Val::Unknown)),
            };
            stack.push((item, first));
            rest = more;
        }
        if let Some(tail) = tail {
            stack.push((tail, rest));
        }
    }
}
