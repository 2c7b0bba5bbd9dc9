//! The project's own functions a definer macro calls to compute its expansion
//! (cl-postgres' `(integer-reader-name bytes signed)`, usocket's
//! `(apply #'define-usocket-condition-class x parents)`): a `defun` of the scope named by
//! a learned macro's computing code is learned too, and a call of it is the value of its
//! body with its parameters bound, computed as a macro's body is (templates, the builders,
//! the pure forms of `template.rs`; anything else unknown). Nothing else of it runs.
//!
//! Only the functions the macros name are read: a first pass lists the names each file's
//! `(defun NAME` spells (a `memmem` pass), a second reads the forms of those wanted only.

use super::datum::{read, Val};
use super::{any_node, Function};
use crate::caseless::Caseless;
use std::collections::HashSet;
use std::sync::{Arc, LazyLock};

/// Rounds of helpers named by learned helpers (`byte-ref-fun-name` calling
/// `byte-fun-name`): each is a pass over the files that define one.
pub(crate) const MAX_ROUNDS: usize = 3;

/// Whether a name a macro calls may be a project function's: not a builder, a pure form
/// or a symbol of Common Lisp (a project does not define one, so a macro calling `car`
/// is not looked for).
pub(crate) fn may_be_project(name: &str) -> bool {
    !super::builders::is_builder(name)
        && !super::template::is_pure(name)
        && !crate::model::is_common_lisp_symbol(name)
}

/// Whether a macro's body may define something through the functions it calls: its
/// templates write a `def...` form, or a `progn`/`eval-when` made of computed forms
/// (`(progn ,@(mapcar ...))`).
pub(crate) fn may_define(defines: bool, body: &[Val]) -> bool {
    defines
        || body.iter().any(|b| {
            any_node(b, &mut |n| {
                matches!(n, Val::Backquote(t) if matches!(t.head(), Some("progn" | "eval-when"))
                && t.items().is_some_and(|items| {
                    items.iter().any(|i| matches!(i, Val::Comma(_) | Val::Splice(_)))
                }))
            })
        })
}

/// The project functions learned, by folded name.
pub(crate) type Functions = super::FoldMap<String, Arc<Function>>;

/// The names that `(defun NAME` spells in `b` (either case), folded, and those `(defvar
/// NAME`, `(defparameter NAME` and `(defconstant NAME` spell, from one pass over `b`;
/// cheap: no form is read, so a name in a comment or a string may be listed (its form
/// is not learned).
pub(crate) fn defined_names(b: &[u8]) -> (Vec<String>, Vec<String>) {
    const GLOBALS: [&[u8]; 3] = [b"var", b"parameter", b"constant"];
    let (mut defuns, mut globals) = (Vec::new(), Vec::new());
    static DEF: LazyLock<Caseless> = LazyLock::new(|| Caseless::new(b"(def"));
    let hits: Vec<usize> = DEF.lower_or_upper(b).collect();
    // Those in lower case first, as listed before.
    let lower = |h: &&usize| b[**h + 1].is_ascii_lowercase();
    let upper = |h: &&usize| !b[**h + 1].is_ascii_lowercase();
    for &hit in hits.iter().filter(lower).chain(hits.iter().filter(upper)) {
        let rest = &b[hit + 4..];
        if rest.len() >= 2 && rest[..2].eq_ignore_ascii_case(b"un") {
            defuns.extend(token_after(b, hit + 6));
        } else if let Some(d) = GLOBALS
            .iter()
            .find(|d| rest.len() >= d.len() && rest[..d.len()].eq_ignore_ascii_case(d))
        {
            globals.extend(token_after(b, hit + 4 + d.len()));
        }
    }
    (defuns, globals)
}

/// Where `(defun` starts in `b`, written in lower or in upper case, in order.
pub(crate) fn defun_forms(b: &[u8]) -> Vec<usize> {
    static DEFUN: LazyLock<Caseless> = LazyLock::new(|| Caseless::new(b"(defun"));
    DEFUN.lower_or_upper(b).collect()
}

/// Where `defun` starts after `(` in `b`, in order.
fn defun_hits(b: &[u8]) -> Vec<usize> {
    let mut hits = defun_forms(b);
    hits.iter_mut().for_each(|h| *h += 1);
    hits
}

/// The folded token after `defun` at `hit`.
fn name_after(b: &[u8], hit: usize) -> Option<String> {
    token_after(b, hit + "defun".len())
}

/// The folded token that follows blanks at `at` (the end of an operator's name: `defun`,
/// `defvar`); `None` when no blank separates them (a longer word) or no token follows.
pub(crate) fn token_after(b: &[u8], at: usize) -> Option<String> {
    let rest = b.get(at..)?;
    let start = rest.iter().position(|c| !c.is_ascii_whitespace())?;
    if start == 0 {
        return None;
    }
    let token = &rest[start..];
    let end = token
        .iter()
        .position(|c| c.is_ascii_whitespace() || matches!(c, b'(' | b')' | b'"' | b';'))
        .unwrap_or(token.len());
    let name = std::str::from_utf8(&token[..end]).ok()?;
    (!name.is_empty() && end <= 200).then(|| name.to_lowercase())
}

/// The `defun`s of `b` named in `wanted` (at top level or inside a form, as
/// `eval-when`): only the top-level forms that hold such a `(defun NAME` are read.
/// A function whose body ends in another project function's call is learned too, for a
/// search by name as for one by pattern (clx's `getify` ending in `xintern`).
pub(crate) fn learn(
    b: &[u8],
    wanted: &HashSet<String>,
    reads: &dyn Fn(bool, &[u8]) -> bool,
) -> Vec<(String, Function)> {
    learn_of(b, wanted, reads, true)
}

/// [`learn`], whatever the function's body ends in: for code a macro splices (clx's
/// `get-put-items`), whose helpers may end in a variable.
pub(crate) fn learn_any(
    b: &[u8],
    wanted: &HashSet<String>,
    reads: &dyn Fn(bool, &[u8]) -> bool,
) -> Vec<(String, Function)> {
    learn_of(b, wanted, reads, false)
}

fn learn_of(
    b: &[u8],
    wanted: &HashSet<String>,
    reads: &dyn Fn(bool, &[u8]) -> bool,
    computing: bool,
) -> Vec<(String, Function)> {
    let mut hits = defun_hits(b);
    hits.retain(|&h| name_after(b, h).is_some_and(|n| wanted.contains(&n)));
    let mut out = Vec::new();
    let mut reads = |plus, e: &[u8]| reads(plus, e);
    super::each_form_holding(b, &hits, &mut |start, end| {
        for form in read(b, start, end, &mut reads) {
            collect_defuns(&form, wanted, computing, &mut out);
        }
    });
    out
}

/// The wanted `defun` forms inside `form`, outside quoted data.
fn collect_defuns(
    form: &Val,
    wanted: &HashSet<String>,
    computing: bool,
    out: &mut Vec<(String, Function)>,
) {
    let mut stack = vec![form];
    while let Some(v) = stack.pop() {
        let Val::List(items) = v else { continue };
        if v.head() == Some("defun") {
            let name = items.get(1).and_then(Val::symbol_name);
            let lambda_list = items.get(2);
            if let (Some(name), Some(lambda_list)) = (name, lambda_list) {
                if wanted.contains(name) && (!computing || computes(&items[3..])) {
                    let function = Function {
                        lambda_list: lambda_list.clone(),
                        body: items[3..].to_vec(),
                        global: true,
                    };
                    out.push((name.to_string(), function));
                }
            }
            continue;
        }
        stack.extend(items.iter().rev());
    }
}

/// Whether a function's body may have a value the expander computes: it ends (inside
/// `let`, `progn`, `flet` ... ) in a template or a call of a builder, of a pure form, of a
/// form of the evaluator (`eval/`) or of another project function. A function that ends
/// otherwise (`gethash`, a variable) is not learned, nor what it calls.
fn computes(body: &[Val]) -> bool {
    let mut body = body;
    for _ in 0..super::MAX_DEPTH {
        let Some(last) = body.last() else {
            return false;
        };
        let Some(head) = last.head() else {
            return matches!(last, Val::Backquote(_));
        };
        let skip = match head {
            "progn" | "locally" | "with-standard-io-syntax" => 1,
            "let" | "let*" | "flet" | "labels" => 2,
            _ => {
                return super::builders::is_builder(head)
                    || super::template::is_pure(head)
                    || super::eval::is_function(head)
                    || super::eval::is_form(head)
                    // Another project function's value (`byte-ref-fun-name` calling
                    // `byte-fun-name`).
                    || may_be_project(head);
            }
        };
        body = last.items().and_then(|i| i.get(skip..)).unwrap_or_default();
    }
    false
}

/// The names `body` calls for a value, outside the literal parts of its templates: the
/// operators of its forms and of the expressions of its commas, `#'name`, and the quoted
/// function of `mapcar`/`apply`/`funcall`. What only a template writes (the expansion's
/// own code) is not called.
pub(crate) fn called(body: &[Val]) -> HashSet<String> {
    let mut out = HashSet::new();
    // (value, inside a template's literal part)
    let mut stack: Vec<(&Val, bool)> = body.iter().map(|v| (v, false)).collect();
    while let Some((v, literal)) = stack.pop() {
        match v {
            Val::Backquote(t) => stack.push((t, true)),
            Val::Comma(x) | Val::Splice(x) => stack.push((x, false)),
            Val::Function(x) if !literal => {
                if let Some(name) = x.symbol_name() {
                    out.insert(name.to_string());
                }
                stack.push((x, false));
            }
            Val::List(items) => {
                if !literal {
                    if let Some(head) = v.head() {
                        out.insert(head.to_string());
                        if matches!(head, "mapcar" | "apply" | "funcall") {
                            if let Some(Val::Quote(q)) = items.get(1) {
                                out.extend(q.symbol_name().map(str::to_string));
                            }
                        }
                    }
                }
                stack.extend(items.iter().map(|i| (i, literal)));
            }
            Val::Dotted(items, tail) => {
                stack.extend(items.iter().map(|i| (i, literal)));
                stack.push((tail, literal));
            }
            Val::Function(x) => stack.push((x, true)),
            Val::Quote(x) if literal => stack.push((x, true)),
            _ => {}
        }
    }
    out
}

/// `f`'s body.
pub(crate) fn body(f: &Function) -> &[Val] {
    &f.body
}

/// Whether `f`'s body writes a `def...` form (its caller's expansion may define it).
pub(crate) fn writes_definer(f: &Function) -> bool {
    f.body
        .iter()
        .any(|b| any_node(b, &mut |n| n.head().is_some_and(|h| h.starts_with("def"))))
}
