//! What names a macro can make, read from its text before any call is expanded: for each
//! `def...` form its templates write, the literal parts (strings, quoted symbols, the text
//! of a format control) that every name it builds there contains. A search for one name
//! need not expand a call of a macro none of whose built names can contain that name's
//! parts: the builders only concatenate, so each literal part is in the result.

use super::datum::Val;
use std::collections::HashMap;

/// The names a macro's templates define: per `def...` form with a computed name, the
/// literal parts the name contains; `None` when a name cannot be read so (a local
/// function, a learned macro's call, a form not understood): any name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Shape {
    pub(crate) built: Option<Vec<Vec<String>>>,
}

impl Shape {
    /// Whether a name built by the macro can be `name` (folded).
    pub(crate) fn may_build(&self, name: &str) -> bool {
        match &self.built {
            None => true,
            Some(forms) => forms
                .iter()
                .any(|parts| parts.iter().all(|p| name.contains(p.as_str()))),
        }
    }
}

/// What a variable whose value is not followed is bound to (told by its address): any
/// name.
static UNKNOWN_VALUE: Val = Val::Unknown;

/// Bindings followed from a variable to its value's expression at most this deep.
const MAX_HOPS: usize = 8;

/// The shape of a macro of `body` (the variables `let`/`let*` bind anywhere in it are
/// followed to their expressions).
pub(crate) fn of_body(body: &[Val]) -> Shape {
    let mut bindings: HashMap<&str, &Val> = HashMap::new();
    let mut templates = Vec::new();
    let mut stack: Vec<&Val> = body.iter().collect();
    while let Some(v) = stack.pop() {
        match v {
            Val::Backquote(t) => templates.push(&**t),
            Val::List(items) => {
                // The values a `multiple-value-bind` takes apart are not followed: its
                // variables may be any name.
                if v.head() == Some("multiple-value-bind") {
                    for var in items.get(1).and_then(Val::items).unwrap_or_default() {
                        if let Some(name) = var.symbol_name() {
                            bindings.insert(name, &UNKNOWN_VALUE);
                        }
                    }
                }
                if matches!(v.head(), Some("let" | "let*")) {
                    for b in items.get(1).and_then(Val::items).unwrap_or_default() {
                        if let Some([var, init]) = b.items() {
                            if let Some(name) = var.symbol_name() {
                                bindings.insert(name, init);
                            }
                        }
                    }
                }
                stack.extend(items);
            }
            Val::Dotted(items, tail) => {
                stack.extend(items);
                stack.push(tail);
            }
            Val::Quote(x) | Val::Comma(x) | Val::Splice(x) | Val::Function(x) => stack.push(x),
            _ => {}
        }
    }
    let mut forms = Vec::new();
    let mut stack = templates;
    while let Some(t) = stack.pop() {
        match t {
            Val::List(items) => {
                if t.head().is_some_and(|h| h.starts_with("def")) {
                    if let Some(Val::Comma(expr)) = items.get(1) {
                        let mut parts = Vec::new();
                        let mut built = false;
                        match literal_parts(expr, &bindings, &mut parts, &mut built, 0) {
                            // A name no builder makes is a parameter's: the call spells it.
                            Some(true) if !built => {}
                            Some(true) => forms.push(parts),
                            // Not a name the builders make: the expansion makes none.
                            Some(false) => {}
                            None => return Shape { built: None },
                        }
                    } else if let Some(name) = items.get(1).and_then(Val::symbol_name) {
                        // A name the template spells: the whole name is its part.
                        forms.push(vec![name.to_string()]);
                    }
                }
                stack.extend(items);
            }
            Val::Dotted(items, tail) => {
                stack.extend(items);
                stack.push(tail);
            }
            Val::Comma(x)
            | Val::Splice(x)
            | Val::Quote(x)
            | Val::Backquote(x)
            | Val::Function(x) => stack.push(x),
            _ => {}
        }
    }
    Shape { built: Some(forms) }
}

/// Adds the literal parts of the name expression `e` to `parts`: `Some(true)` when the
/// builders compute it, `Some(false)` when they cannot (a call of another function: the
/// name is unknown, nothing is made), `None` when it is not known which (a nested
/// template, a variable followed too far): any name may come of it.
fn literal_parts<'a>(
    e: &'a Val,
    bindings: &HashMap<&str, &'a Val>,
    parts: &mut Vec<String>,
    built: &mut bool,
    hops: usize,
) -> Option<bool> {
    if hops > MAX_HOPS {
        return None;
    }
    match e {
        // A parameter (the call spells it) or a variable bound to an expression.
        Val::Sym(w) => match bindings.get(w.name.as_str()) {
            Some(init) if std::ptr::eq(*init, &UNKNOWN_VALUE) => None,
            Some(init) => literal_parts(init, bindings, parts, built, hops + 1),
            None => Some(true),
        },
        Val::Str(s) => {
            parts.extend(control_text(&s.to_lowercase()));
            Some(true)
        }
        Val::Quote(q) => {
            if let Some(name) = q.symbol_name() {
                parts.extend(control_text(name));
            }
            Some(true)
        }
        Val::List(items) => {
            let Some(op) = e.head() else {
                return Some(false);
            };
            if !super::builders::is_builder(op) {
                return computed_parts(op, &items[1..], bindings, hops);
            }
            *built = true;
            // The arguments that become part of the name (not a package, nor `'string`,
            // nor `format`'s destination).
            let skip = match op {
                "format-symbol" | "format" | "concatenate" => 2,
                _ => 1,
            };
            let last = if op == "intern" { 2 } else { items.len() };
            let mut all = Some(true);
            for a in &items[skip.min(items.len())..last.min(items.len())] {
                match literal_parts(a, bindings, parts, built, hops + 1) {
                    Some(true) => {}
                    Some(false) => return Some(false),
                    None => all = None,
                }
            }
            all
        }
        Val::Atom(_) => Some(true),
        Val::Unknown => Some(false),
        _ => None,
    }
}

/// [`literal_parts`] of `(op args...)`, `op` not a builder. An element the evaluator
/// takes out of a list is a name as written, unless a builder made one in the list; what
/// it computes otherwise (a number, a cut string, a branch's value) has no literal part
/// to require: any name; another function's value is unknown: nothing is made.
fn computed_parts<'a>(
    op: &str,
    args: &'a [Val],
    bindings: &HashMap<&str, &'a Val>,
    hops: usize,
) -> Option<bool> {
    if super::eval::lists::is_selector(op) {
        let (mut parts, mut built) = (Vec::new(), false);
        for a in args {
            literal_parts(a, bindings, &mut parts, &mut built, hops + 1)?;
        }
        return if built { None } else { Some(true) };
    }
    let computed = super::eval::is_function(op) || super::eval::is_form(op) || op == "loop";
    if computed {
        None
    } else {
        Some(false)
    }
}

/// The literal text of a format control: the stretches between directives.
fn control_text(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '~' {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            // Modifiers, then the directive.
            for d in chars.by_ref() {
                if !matches!(d, ':' | '@') {
                    break;
                }
            }
        } else {
            current.push(c);
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}
