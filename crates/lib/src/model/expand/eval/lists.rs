//! The list, symbol and string functions of Common Lisp computed on known values:
//! `list`, `cons`, `car`/`cdr`/`first`..`fifth`/`rest`, `nth`, `elt` (of a list),
//! `make-list`, `nthcdr`, `last`, `butlast`,
//! `append`, `reverse` (and `nreverse`, `nconc`, which the code uses for their values),
//! `copy-list`, `length`, `subseq`, `member`, `assoc`, `getf`, `list*`, `null`/`not`,
//! `endp`, `consp`, `listp`, `atom`, `symbolp`, `stringp`, `keywordp`, `eq`, `eql`,
//! `equal`, `string=`, `string-equal`, `identity`, `load-time-value` (of its value),
//! `remove-duplicates` (by `eql`, without keyword arguments),
//! alexandria's `ensure-list`,
//! `gensym` (an uninterned symbol), `symbol-package` and `find-package` of `KEYWORD` (a
//! symbol without a prefix is in the file's package, which is not `KEYWORD`; another
//! package is unknown). `member` and `assoc` compare with `eql`
//! and take no keyword arguments; `eq`/`eql` of two strings is unknown (it asks for
//! identity). Anything else is not computed.

use super::super::datum::Val;
use super::numbers::int;
use crate::model::symbols::{Prefix, Written};
use compact_str::ToCompactString;

/// Whether `(operator ...)` takes its value out of its arguments (an element of a list,
/// an argument itself): a name it gives is one written somewhere, not made.
pub(crate) fn is_selector(operator: &str) -> bool {
    matches!(
        operator,
        "car"
            | "cdr"
            | "first"
            | "second"
            | "third"
            | "fourth"
            | "fifth"
            | "rest"
            | "nth"
            | "elt"
            | "nthcdr"
            | "last"
            | "getf"
            | "identity"
            | "copy-list"
            | "load-time-value"
            | "ensure-list"
    )
}

/// `caar`, `cdar`, `cadr`, `caddr` ...: two to four `car`s and `cdr`s in one.
fn is_cxr(operator: &str) -> bool {
    let b = operator.as_bytes();
    (4..=6).contains(&b.len())
        && b[0] == b'c'
        && b[b.len() - 1] == b'r'
        && b[1..b.len() - 1].iter().all(|c| matches!(c, b'a' | b'd'))
}

/// `(cXXr x)`: the `car`s and `cdr`s of its letters, the last letter first.
fn cxr(operator: &str, x: &Val) -> Option<Val> {
    let letters = &operator.as_bytes()[1..operator.len() - 1];
    let mut v = x.clone();
    for c in letters.iter().rev() {
        let (car, cdr) = split(&v)?;
        v = if *c == b'a' { car } else { cdr };
    }
    Some(v)
}

/// Whether [`call`] computes `(operator ...)`.
pub(crate) fn is_function(operator: &str) -> bool {
    is_selector(operator)
        // Computed, but not a selector for the names a macro may build (`shape.rs`):
        // a macro taking `caddr`s of its data is read as one that may build any name.
        || is_cxr(operator)
        || matches!(
            operator,
            "cons"
                | "list"
                | "butlast"
                | "append"
                | "nconc"
                | "reverse"
                | "nreverse"
                | "length"
                | "subseq"
                | "member"
                | "assoc"
                | "list*"
                | "null"
                | "not"
                | "endp"
                | "consp"
                | "listp"
                | "atom"
                | "symbolp"
                | "stringp"
                | "keywordp"
                | "eq"
                | "eql"
                | "equal"
                | "string="
                | "string-equal"
                | "symbol-package"
                | "find-package"
                | "gensym"
                | "make-list"
                | "remove-duplicates"
        )
}

/// The package `KEYWORD`, as `find-package` and `symbol-package` give it; any other
/// package is [`CURRENT`] (a symbol written without a prefix) or unknown.
pub(crate) const KEYWORD: &str = "#<package keyword>";
/// The package of a symbol written without a prefix: the file's, which is not `KEYWORD`.
pub(crate) const CURRENT: &str = "#<package>";

fn package(v: &Val) -> Option<&str> {
    match v {
        Val::Atom(a) if a == KEYWORD || a == CURRENT => Some(a),
        _ => None,
    }
}

fn boolean(b: bool) -> Val {
    Val::sym(if b { "t" } else { "nil" })
}

fn list(items: Vec<Val>) -> Val {
    if items.is_empty() {
        Val::sym("nil")
    } else {
        Val::List(items)
    }
}

/// Lists longer than this are not made by `make-list` (a macro's lists are its slots).
const MAX_MADE_LIST: usize = 4096;

/// `(make-list n)`, `(make-list n :initial-element x)`.
fn make_list(args: &[Val]) -> Option<Val> {
    let (n, rest) = args.split_first()?;
    let n = usize::try_from(int(n)?)
        .ok()
        .filter(|&n| n <= MAX_MADE_LIST)?;
    let element = match rest {
        [] => Val::sym("nil"),
        [k, x] if k.is_keyword() && k.symbol_name() == Some("initial-element") => x.clone(),
        _ => return None,
    };
    Some(list(vec![element; n]))
}

/// Elements compared by `remove-duplicates` at most (it compares each with the later
/// ones).
const MAX_DEDUPLICATED: usize = 4096;

/// `(remove-duplicates list)` by `eql`, without keyword arguments: of equal elements
/// the last stays, as Common Lisp's does; unknown when two cannot be compared.
fn remove_duplicates(l: &Val) -> Option<Val> {
    let items = l.items()?;
    if items.len() > MAX_DEDUPLICATED {
        return None;
    }
    let mut out = Vec::with_capacity(items.len());
    for (k, x) in items.iter().enumerate() {
        let mut later = false;
        for y in &items[k + 1..] {
            if eql(x, y)? {
                later = true;
                break;
            }
        }
        if !later {
            out.push(x.clone());
        }
    }
    Some(list(out))
}

/// `(car . cdr)` as the reader's data: a proper list when `cdr` is one.
pub(crate) fn cons(car: Val, cdr: Val) -> Val {
    match cdr {
        Val::List(mut items) => {
            items.insert(0, car);
            Val::List(items)
        }
        Val::Dotted(mut items, tail) => {
            items.insert(0, car);
            Val::Dotted(items, tail)
        }
        v if v.is_nil() => Val::List(vec![car]),
        v => Val::Dotted(vec![car], Box::new(v)),
    }
}

/// The first element and the rest of a list (`nil` gives `nil` and `nil`).
pub(crate) fn split(v: &Val) -> Option<(Val, Val)> {
    match v {
        Val::List(items) => match items.split_first() {
            Some((first, rest)) => Some((first.clone(), list(rest.to_vec()))),
            None => Some((Val::sym("nil"), Val::sym("nil"))),
        },
        Val::Dotted(items, tail) => {
            let (first, rest) = items.split_first()?;
            let rest = if rest.is_empty() {
                (**tail).clone()
            } else {
                Val::Dotted(rest.to_vec(), tail.clone())
            };
            Some((first.clone(), rest))
        }
        v if v.is_nil() => Some((Val::sym("nil"), Val::sym("nil"))),
        _ => None,
    }
}

/// Whether two known values are `eql`; `None` when that asks for identity (strings,
/// lists) or a value is unknown.
pub(crate) fn eql(a: &Val, b: &Val) -> Option<bool> {
    match (a, b) {
        (Val::Unknown, _) | (_, Val::Unknown) => None,
        (Val::Sym(_), Val::Sym(_)) => Some(a == b || (a.is_nil() && b.is_nil())),
        // Packages: `KEYWORD` is itself and no other; two others may be the same.
        _ if package(a).is_some() || package(b).is_some() => match (package(a), package(b)) {
            (Some(KEYWORD), Some(KEYWORD)) => Some(true),
            (Some(KEYWORD), Some(_)) | (Some(_), Some(KEYWORD)) => Some(false),
            _ => None,
        },
        (Val::Atom(_), Val::Atom(_)) => match (int(a), int(b)) {
            (Some(x), Some(y)) => Some(x == y),
            _ => Some(a == b),
        },
        _ if a.is_nil() && b.is_nil() => Some(true),
        (Val::Sym(_) | Val::Atom(_), _) | (_, Val::Sym(_) | Val::Atom(_)) => Some(false),
        _ => None,
    }
}

/// Whether two known values are `equal`; `None` when one holds something unknown.
fn equal(a: &Val, b: &Val) -> Option<bool> {
    if matches!(a, Val::Unknown) || matches!(b, Val::Unknown) {
        return None;
    }
    match (a, b) {
        (Val::Str(x), Val::Str(y)) => Some(x == y),
        (Val::List(x), Val::List(y)) => {
            if x.len() != y.len() {
                return Some(false);
            }
            for (p, q) in x.iter().zip(y) {
                if !equal(p, q)? {
                    return Some(false);
                }
            }
            Some(true)
        }
        _ => eql(a, b),
    }
}

/// A string designator's text as written (symbols' names are folded).
fn text(v: &Val) -> Option<String> {
    match v {
        Val::Str(s) => Some(s.to_string()),
        Val::Sym(w) => Some(w.name.to_string()),
        _ => None,
    }
}

/// The value of `(operator args...)` on evaluated arguments; `None` when it cannot be
/// known.
pub(crate) fn call(operator: &str, args: &[Val]) -> Option<Val> {
    if args.iter().any(|a| matches!(a, Val::Unknown)) {
        return None;
    }
    let one = || match args {
        [x] => Some(x),
        _ => None,
    };
    Some(match operator {
        "list" => list(args.to_vec()),
        "cons" => match args {
            [a, b] => cons(a.clone(), b.clone()),
            _ => return None,
        },
        "car" | "first" => split(one()?)?.0,
        _ if is_cxr(operator) => cxr(operator, one()?)?,
        "cdr" | "rest" => split(one()?)?.1,
        "second" | "third" | "fourth" | "fifth" => {
            let k = ["second", "third", "fourth", "fifth"]
                .iter()
                .position(|n| *n == operator)?
                + 1;
            one()?
                .items()?
                .get(k)
                .cloned()
                .unwrap_or_else(|| Val::sym("nil"))
        }
        // `elt` of a list: its index second.
        "elt" => {
            let [l, k] = args else { return None };
            let k = usize::try_from(int(k)?).ok()?;
            l.items()?.get(k).cloned()?
        }
        "make-list" => make_list(args)?,
        "remove-duplicates" => remove_duplicates(one()?)?,
        "nth" | "nthcdr" => {
            let [k, l] = args else { return None };
            let k = usize::try_from(int(k)?).ok()?;
            let items = l.items()?;
            if operator == "nth" {
                items.get(k).cloned().unwrap_or_else(|| Val::sym("nil"))
            } else {
                list(items.get(k..).unwrap_or_default().to_vec())
            }
        }
        "last" => list(one()?.items()?.last().cloned().into_iter().collect()),
        "butlast" => {
            let items = one()?.items()?;
            list(items[..items.len().saturating_sub(1)].to_vec())
        }
        "append" | "nconc" => {
            let (last, before) = match args.split_last() {
                Some(x) => x,
                None => return Some(Val::sym("nil")),
            };
            let mut out = Vec::new();
            for a in before {
                out.extend_from_slice(a.items()?);
            }
            match last.items() {
                Some(items) => {
                    out.extend_from_slice(items);
                    list(out)
                }
                None if out.is_empty() => last.clone(),
                None => Val::Dotted(out, Box::new(last.clone())),
            }
        }
        // A string is not turned round (nor cut by `subseq`, nor taken apart by `loop
        // across`): a name is made of whole pieces of text and printed numbers, which lets
        // a search by name rule a call out before expanding it (`pieces.rs`).
        "reverse" | "nreverse" => match one()? {
            Val::Str(_) => return None,
            l => list(l.items()?.iter().rev().cloned().collect()),
        },
        "copy-list" | "identity" | "load-time-value" => one()?.clone(),
        // Alexandria's: a list as it is, another value in a list of one.
        "ensure-list" => match one()? {
            x @ (Val::List(_) | Val::Dotted(..)) => x.clone(),
            x if x.is_nil() => x.clone(),
            x => Val::List(vec![x.clone()]),
        },
        "symbol-package" => match one()? {
            Val::Sym(w) => match &w.prefix {
                Prefix::Keyword => Val::Atom(KEYWORD.into()),
                Prefix::None => Val::Atom(CURRENT.into()),
                Prefix::Uninterned => Val::sym("nil"),
                Prefix::Package(_) => return None,
            },
            _ => return None,
        },
        "find-package" => match one()? {
            Val::Sym(w) if w.name == "keyword" => Val::Atom(KEYWORD.into()),
            Val::Str(s) if s == "KEYWORD" => Val::Atom(KEYWORD.into()),
            _ => return None,
        },
        "gensym" => {
            let name = match args {
                [] => "g".to_string(),
                [x] => text(x)?.to_lowercase(),
                _ => return None,
            };
            Val::Sym(Written {
                prefix: Prefix::Uninterned,
                name: name.into(),
            })
        }
        "length" => match one()? {
            Val::Str(s) => Val::Atom(s.chars().count().to_compact_string()),
            l => Val::Atom(l.items()?.len().to_compact_string()),
        },
        "subseq" => subseq(args)?,
        "member" => {
            let [x, l] = args else { return None };
            let items = l.items()?;
            for (k, item) in items.iter().enumerate() {
                if eql(x, item)? {
                    return Some(list(items[k..].to_vec()));
                }
            }
            Val::sym("nil")
        }
        "assoc" => {
            let [x, l] = args else { return None };
            for pair in l.items()? {
                if pair.is_nil() {
                    continue;
                }
                if eql(x, &split(pair)?.0)? {
                    return Some(pair.clone());
                }
            }
            Val::sym("nil")
        }
        "getf" => {
            let (plist, indicator, default) = match args {
                [p, i] => (p, i, Val::sym("nil")),
                [p, i, d] => (p, i, d.clone()),
                _ => return None,
            };
            let items = plist.items()?;
            for pair in items.chunks(2) {
                if eql(&pair[0], indicator)? {
                    return pair.get(1).cloned();
                }
            }
            default
        }
        "list*" => {
            let (last, before) = args.split_last()?;
            before
                .iter()
                .rev()
                .fold(last.clone(), |tail, x| cons(x.clone(), tail))
        }
        "null" | "not" | "endp" => boolean(one()?.is_nil()),
        "consp" => boolean(
            matches!(one()?, Val::List(i) if !i.is_empty()) || matches!(one()?, Val::Dotted(..)),
        ),
        "listp" => boolean(one()?.is_nil() || matches!(one()?, Val::List(_) | Val::Dotted(..))),
        "atom" => boolean(
            !matches!(one()?, Val::List(i) if !i.is_empty()) && !matches!(one()?, Val::Dotted(..)),
        ),
        "symbolp" => boolean(matches!(one()?, Val::Sym(_)) || one()?.is_nil()),
        "stringp" => boolean(matches!(one()?, Val::Str(_))),
        "keywordp" => boolean(one()?.is_keyword()),
        "eq" | "eql" => match args {
            [a, b] => boolean(eql(a, b)?),
            _ => return None,
        },
        "equal" => match args {
            [a, b] => boolean(equal(a, b)?),
            _ => return None,
        },
        "string=" | "string-equal" => match args {
            [a, b] => {
                let (a, b) = (text(a)?, text(b)?);
                // Symbols' names are folded: compare as `string-equal` does.
                boolean(a.to_lowercase() == b.to_lowercase())
            }
            _ => return None,
        },
        _ => return None,
    })
}

/// `(subseq sequence start [end])` of a list (of a string: unknown).
fn subseq(args: &[Val]) -> Option<Val> {
    let (seq, start, end) = match args {
        [s, a] => (s, a, None),
        [s, a, e] if e.is_nil() => (s, a, None),
        [s, a, e] => (s, a, Some(e)),
        _ => return None,
    };
    let start = usize::try_from(int(start)?).ok()?;
    let end = match end {
        Some(e) => Some(usize::try_from(int(e)?).ok()?),
        None => None,
    };
    match seq {
        // Not cut: see `reverse`.
        Val::Str(_) => None,
        l => {
            let items = l.items()?;
            let end = end.unwrap_or(items.len());
            Some(list(items.get(start..end)?.to_vec()))
        }
    }
}
