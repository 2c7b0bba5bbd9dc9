//! The pure name builders a definer macro may call to make a name, computed on known
//! arguments: alexandria's `symbolicate`, `format-symbol` and `make-keyword`, `intern`,
//! `make-symbol`, `format nil`, `concatenate 'string`, `string`, `symbol-name`,
//! `string-upcase`, `string-downcase`, `princ-to-string`. Names are folded to lower case
//! as the rest of the model folds them. Anything else is not called: [`call`] answers
//! `None` for it, and an unknown argument makes an unknown result.

use super::datum::Val;
use crate::model::symbols::{Prefix, Written};

/// Whether `operator` (folded, no package) is a builder [`call`] computes.
pub(crate) fn is_builder(operator: &str) -> bool {
    matches!(
        operator,
        "symbolicate"
            | "format-symbol"
            | "make-keyword"
            | "intern"
            | "make-symbol"
            | "format"
            | "concatenate"
            | "string"
            | "symbol-name"
            | "string-upcase"
            | "string-downcase"
            | "princ-to-string"
    )
}

/// The value of `(operator args...)` for a builder with its arguments evaluated;
/// [`Val::Unknown`] when an argument or the result cannot be known.
pub(crate) fn call(operator: &str, args: &[Val]) -> Val {
    compute(operator, args).unwrap_or(Val::Unknown)
}

fn compute(operator: &str, args: &[Val]) -> Option<Val> {
    Some(match operator {
        "symbolicate" => symbol(Prefix::None, concat(args)?),
        "make-keyword" => symbol(Prefix::Keyword, designator(args.first()?)?),
        "format-symbol" => {
            let (package, rest) = args.split_first()?;
            symbol(package_of(package)?, format(rest)?)
        }
        "intern" => {
            let package = match args.get(1) {
                None => Prefix::None,
                Some(p) => package_of(p)?,
            };
            symbol(package, string_of(args.first()?)?)
        }
        "make-symbol" => symbol(Prefix::Uninterned, string_of(args.first()?)?),
        "format" if args.first()?.is_nil() => Val::Str(format(&args[1..])?.into()),
        "concatenate" => {
            let (kind, rest) = args.split_first()?;
            // clx's `(apply #'concatenate 'simple-string ...)`: a string all the same.
            if ![
                "string",
                "simple-string",
                "base-string",
                "simple-base-string",
            ]
            .iter()
            .any(|k| kind.is_symbol(k))
            {
                return None;
            }
            Val::Str(concat(rest)?.into())
        }
        "string" | "symbol-name" | "string-upcase" | "string-downcase" | "princ-to-string" => {
            Val::Str(designator(args.first()?)?.into())
        }
        _ => return None,
    })
}

fn symbol(prefix: Prefix, name: String) -> Val {
    Val::Sym(Written {
        prefix,
        name: name.into(),
    })
}

/// The package a builder is given: `t`/`nil` the current one, `:keyword` the keywords,
/// or a package the evaluator computed (`(symbol-package name)`, `eval::lists`). A
/// package the evaluator cannot compute (a global variable, clx's
/// `(intern ... *xlib-package*)`) is taken as the current one: the name is known, its
/// package is the file's as far as can be told.
fn package_of(v: &Val) -> Option<Prefix> {
    use super::eval::lists::{CURRENT, KEYWORD};
    if v.is_symbol("t")
        || v.is_nil()
        || matches!(v, Val::Unknown)
        || matches!(v, Val::Atom(a) if a == CURRENT)
    {
        return Some(Prefix::None);
    }
    if matches!(v, Val::Atom(a) if a == KEYWORD) {
        return Some(Prefix::Keyword);
    }
    if let Val::Sym(w) = v {
        if w.prefix == Prefix::Uninterned {
            return None;
        }
    }
    let name = designator(v)?;
    Some(if name == "keyword" {
        Prefix::Keyword
    } else {
        Prefix::Package(name)
    })
}

/// A string or a symbol's name, folded.
fn string_of(v: &Val) -> Option<String> {
    match v {
        Val::Str(s) => Some(s.as_str().to_lowercase()),
        _ => None,
    }
}

/// A string designator's text, folded: a string, a symbol's name, a character; a
/// number as written (`symbolicate` and `~A` print it) when that is how it prints: an
/// integer written otherwise than in decimal (`#x10`, `1.`, `+5`, `007`) prints as its value,
/// which its text does not spell (a search by name looks for the call's text), so it is
/// unknown.
fn designator(v: &Val) -> Option<String> {
    match v {
        Val::Str(s) => Some(s.as_str().to_lowercase()),
        Val::Sym(w) => Some(w.name.to_string()),
        Val::Atom(a) => match a.strip_prefix("#\\") {
            Some(c) if c.chars().count() == 1 => Some(c.to_lowercase()),
            Some(_) => None,
            None if a.starts_with('#') || a.starts_with('+') || a.ends_with('.') => None,
            None if super::eval::numbers::int(v).is_some_and(|n| n.to_string() != *a) => None,
            None => Some(a.as_str().to_lowercase()),
        },
        _ => None,
    }
}

fn concat(args: &[Val]) -> Option<String> {
    args.iter().map(designator).collect()
}

/// `(format nil CONTROL ARGS...)` for the directives that print an argument as `~A` does
/// (`~A`, `~S`, `~D`), `~%`, `~~`, case conversion `~(...~)` (a no-op on folded text), and
/// iteration over a list argument `~{...~}` (not nested) with `~^` (lparallel's
/// `(format-symbol nil "~{~a~}" designators)`).
fn format(args: &[Val]) -> Option<String> {
    let (control, args) = args.split_first()?;
    // `format-symbol` takes a string designator (alexandria's `'#:~A-p`).
    let control: Vec<char> = match control {
        Val::Str(text) => text.chars().collect(),
        Val::Sym(w) => w.name.chars().collect(),
        _ => return None,
    };
    let mut out = String::new();
    print(&control, args, &mut 0, &mut out, true)?;
    Some(out)
}

/// The longest text `format` makes: an iteration repeats its control's text once per
/// element, so a long control over a long list could make their product.
const MAX_FORMAT_CHARS: usize = 1 << 16;

/// Prints `control` into `out` with the arguments `args` from `next` on; `Some(false)`
/// when a `~^` found no argument left (the iteration ends).
fn print(
    control: &[char],
    args: &[Val],
    next: &mut usize,
    out: &mut String,
    outer: bool,
) -> Option<bool> {
    let mut i = 0;
    while let Some(&c) = control.get(i) {
        i += 1;
        if out.len() > MAX_FORMAT_CHARS {
            return None;
        }
        if c != '~' {
            out.extend(c.to_lowercase());
            continue;
        }
        // Modifiers (`:`, `@`) before the directive.
        let mut modified = false;
        let mut directive = *control.get(i)?;
        i += 1;
        while matches!(directive, ':' | '@') {
            modified = true;
            directive = *control.get(i)?;
            i += 1;
        }
        match directive.to_ascii_lowercase() {
            'a' | 's' | 'd' => {
                out.push_str(&designator(args.get(*next)?)?);
                *next += 1;
            }
            '%' => out.push('\n'),
            '~' => out.push('~'),
            '(' | ')' => {}
            '^' if !outer => {
                if *next >= args.len() {
                    return Some(false);
                }
            }
            '{' if outer && !modified => {
                let body_end = (i..control.len().saturating_sub(1))
                    .find(|&k| control[k] == '~' && control[k + 1] == '}')?;
                let items = match args.get(*next)? {
                    v if v.is_nil() => &[][..],
                    v => v.items()?,
                };
                *next += 1;
                let mut taken = 0;
                while taken < items.len() {
                    let before = taken;
                    let more = print(&control[i..body_end], items, &mut taken, out, false)?;
                    // A body that takes no element would repeat forever.
                    if !more || taken == before {
                        break;
                    }
                }
                i = body_end + 2;
            }
            _ => return None,
        }
    }
    Some(true)
}
