//! Calls whose operator a macro computes (docs/find.md#calls-through-the-projects-macros):
//! clx's `check-put` writes `(,(putify type) ,index ,var ,@args)`, so `(check-put 4 x
//! card16)` calls `card16-put`, a name no text spells; `with-buffer-request-internal`
//! splices the code its helper *function* `get-put-items` returns, which calls
//! `check-put`. Neither is seen by the templates' words ([`super::writers_of`]).
//!
//! A macro whose template has a computed operator (`(,(f ...) ...)`) may write a call
//! of a name holding a literal part of `f`'s text and of the project functions it calls
//! (`putify`'s `-put`); a project function whose templates write a writer's call (a
//! code-writing function) makes the macros calling it writers too. Both are looked for
//! only when a learned macro's text holds `(,(`, and only the files defining the
//! functions named are read again. Such a writer is **strict**: its call calls the
//! symbol only when its expansion, computed in full, does (never at the templates'
//! word). The expansions are made with every macro of the scope (for `macroexpand` and
//! the macros a function's code calls), the project functions they call, the global
//! constants they read from any file of the scope, and the symbol properties
//! (`find/properties.rs`).

use super::{parts, template_calls, Learned, Writers};
use crate::find::literal::Finder;
use crate::find::SymbolQuery;
use crate::model::expand::datum::Val;
use crate::model::expand::{self, functions, properties, Function, Macros, MAX_MACRO_DEPTH};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// What a template's computed operator starts with (`(,(putify type) ...)`).
const COMPUTED: &[u8] = b"(,(";

/// Literal parts shorter than this match too many names to tell anything.
const MIN_PART: usize = 2;

/// Comparisons of a computed operator's parts with the names it may write, per byte of
/// the scope's macro text: every head is compared with every name at each level, which
/// a scope made of many such macros would make quadratic; past this budget no more
/// writers are added (fewer callers listed, none wrong) and the search stays linear.
const COMPARISONS_PER_BYTE: usize = 16;

/// Global variables' constant values.
type Values = Vec<(String, Val)>;
/// Named functions, as learned.
type Learnt = Vec<(String, Function)>;
/// What a macro's templates write (name, `setf`) and the names its body calls.
type Writes = (Vec<(String, bool)>, HashSet<String>);

/// The scope's files, read again for what the computed writers need.
pub(crate) struct Passes<'a> {
    /// The `defun`s of these names (whatever their bodies end in).
    pub(crate) functions: &'a dyn Fn(&HashSet<String>) -> Learnt,
    /// The `defun`s whose text holds one of these names.
    pub(crate) holding: &'a dyn Fn(&Finder) -> Learnt,
    /// The constant values of the `defvar`/`defparameter`/`defconstant` of these names.
    pub(crate) constants: &'a dyn Fn(&HashSet<String>) -> Values,
    /// The symbol properties the expansions read, when the named macros read one.
    pub(crate) properties: &'a dyn Fn(&Macros, &[String]) -> Option<properties::Store>,
}

/// A macro's computed operator: the macro, and the literal parts of what computes it.
struct Head {
    macro_name: String,
    /// Each part, and whether it is a piece of a name rather than a whole one.
    parts: Vec<(String, bool)>,
}

/// Adds to `writers` the macros that may write a call of `query`'s symbol under a
/// computed operator or through a code-writing function, strict, with the environment
/// their expansions need. Nothing is read when no learned macro computes an operator.
pub(super) fn widen(
    learned: &[Learned],
    local: Local,
    query: &SymbolQuery,
    writers: &mut Writers,
    reads: &dyn Fn(bool, &[u8]) -> bool,
    passes: &Passes,
) {
    let computing: Vec<&Learned> = learned
        .iter()
        .filter(|l| memchr::memmem::find(&l.text, COMPUTED).is_some())
        .collect();
    let mut heads = Vec::new();
    for l in &computing {
        for expression in operator_expressions(&l.text, reads) {
            heads.push((l.name.clone(), expression, false));
        }
    }
    // The functions writing code under a computed operator (clx's `make-setter-forms`).
    for (name, expression) in local.heads {
        heads.push((name, expression, true));
    }
    if heads.is_empty() {
        return;
    }
    let mut known = functions::Functions::default();
    for (name, f) in local.functions {
        known.insert(name, Arc::new(f));
    }
    type Marked = Vec<(Head, bool)>;
    let (heads, function_heads): (Marked, Marked) = heads
        .into_iter()
        .map(|(macro_name, expression, function)| {
            let head = Head {
                macro_name,
                parts: literal_parts(&expression, &known),
            };
            (head, function)
        })
        .filter(|(h, _)| !h.parts.is_empty())
        .partition(|(_, function)| !function);
    let heads: Vec<Head> = heads.into_iter().map(|(h, _)| h).collect();
    let function_heads: Vec<Head> = function_heads.into_iter().map(|(h, _)| h).collect();
    let mut names: HashSet<String> = writers.names.clone();
    names.insert(query.name.clone());
    let text: usize = learned.iter().map(|l| l.text.len()).sum();
    let mut comparisons = text.saturating_mul(COMPARISONS_PER_BYTE);
    // The code-writing functions: those whose text holds the name of a macro computing
    // an operator that may be one of these names.
    let mut spelled: Vec<String> = heads
        .iter()
        .filter(|h| h.may_write_any(&names, &mut comparisons))
        .map(|h| h.macro_name.clone())
        .collect();
    // A function computing an operator that may be one of these names writes code.
    let computing_functions: HashSet<String> = function_heads
        .iter()
        .filter(|h| h.may_write_any(&names, &mut comparisons))
        .map(|h| h.macro_name.clone())
        .collect();
    if spelled.is_empty() && computing_functions.is_empty() {
        return;
    }
    spelled.sort();
    spelled.dedup();
    // (The computing functions are among `known` already.)
    let writing: Vec<(String, Function)> = if spelled.is_empty() {
        Vec::new()
    } else {
        (passes.holding)(&Finder::any(&spelled))
    };
    let strict = levels(
        learned,
        reads,
        &heads,
        (&writing, &computing_functions),
        names,
        &mut comparisons,
    );
    if strict.is_empty() {
        return;
    }
    for (name, f) in writing {
        known.entry(name).or_insert_with(|| Arc::new(f));
    }
    let mut env = environment(learned, reads, &strict, known, writers, passes);
    // The searched symbol's own calls stay in the expansions, where they are looked for.
    env.kept = Some(query.name.clone());
    writers.names.extend(strict.iter().cloned());
    writers.strict.extend(strict);
    writers.strict_macros = env;
}

/// What the first pass keeps of a file for the computed operators.
#[derive(Default)]
pub(crate) struct Local {
    /// The project functions the computed operators call (see [`local_functions`]).
    pub(crate) functions: Vec<(String, Function)>,
    /// The computed operators of its `defun`s' templates: the function's folded name,
    /// the expression (clx's `make-setter-forms` and `(setter type)`).
    pub(crate) heads: Vec<(String, Val)>,
}

impl Local {
    /// The files' parts, together.
    pub(crate) fn merge(all: Vec<Local>) -> Local {
        let mut out = Local::default();
        for l in all {
            out.functions.extend(l.functions);
            out.heads.extend(l.heads);
        }
        out
    }
}

/// The project functions that the computed operators of `found` (the macros of the file
/// `b`) and of `b`'s `defun`s call, and those these call, when `b` defines them: the
/// literal parts of the names the operators build are read from them; and the `defun`s'
/// computed operators. Nothing is read for a file without `(,(`.
pub(crate) fn local_functions(
    b: &[u8],
    found: &[Learned],
    reads: &dyn Fn(bool, &[u8]) -> bool,
    spells: &dyn Fn(&[u8]) -> bool,
) -> Local {
    // The operator after each `(,(`, told from the text (most macros of a large scope
    // are never read into data).
    let mut wanted: HashSet<String> = HashSet::new();
    for l in found {
        for at in memchr::memmem::find_iter(&l.text, COMPUTED) {
            wanted.extend(first_token(&l.text[at + 3..]));
        }
    }
    let heads = computing_defuns(b, reads, spells);
    wanted.extend(
        heads
            .iter()
            .filter_map(|(_, e)| e.head().map(str::to_string)),
    );
    let mut out: Vec<(String, Function)> = Vec::new();
    let mut learned: HashSet<String> = HashSet::new();
    for _ in 0..functions::MAX_ROUNDS {
        wanted.retain(|n| functions::may_be_project(n) && !learned.contains(n));
        if wanted.is_empty() {
            break;
        }
        let found = functions::learn_any(b, &wanted, reads);
        learned.extend(found.iter().map(|(n, _)| n.clone()));
        wanted = found
            .iter()
            .flat_map(|(_, f)| functions::called(functions::body(f)))
            .collect();
        out.extend(found);
    }
    Local {
        functions: out,
        heads,
    }
}

/// The computed operators of `b`'s `defun`s (a `(,(` after a `(defun` with no
/// `defmacro` between), each with the function's name: only the expressions after
/// `(,(` are read, as for macros ([`operator_expressions`]), not the functions. Only in
/// a file that `spells` the searched name (clx's `setter` returning `'aset-card32` next
/// to `make-setter-forms`): elsewhere no part of the operator may be it, and reading
/// every file's `defun`s would cost the search a pass of its own.
fn computing_defuns(
    b: &[u8],
    reads: &dyn Fn(bool, &[u8]) -> bool,
    spells: &dyn Fn(&[u8]) -> bool,
) -> Vec<(String, Val)> {
    let computed: Vec<usize> = memchr::memmem::find_iter(b, COMPUTED).collect();
    if computed.is_empty() || !spells(b) {
        return Vec::new();
    }
    let defuns = functions::defun_forms(b);
    if defuns.is_empty() {
        return Vec::new();
    }
    let macros = expand::defmacro_hits(b);
    let mut reads = |plus, e: &[u8]| reads(plus, e);
    let mut budget = expand::Budget::new(usize::MAX);
    let mut out = Vec::new();
    // Each byte is read once: an operator inside another's expression is not looked for.
    let mut from = 0;
    for at in computed {
        if at < from {
            continue;
        }
        let k = defuns.partition_point(|&d| d < at);
        let Some(&defun) = k.checked_sub(1).and_then(|k| defuns.get(k)) else {
            continue;
        };
        // A `defmacro` between them holds it.
        let m = macros.partition_point(|&h| h < at);
        if m > 0 && macros[m - 1] > defun {
            continue;
        }
        let Some(name) = functions::token_after(b, defun + "(defun".len()) else {
            continue;
        };
        let open = at + 2;
        let Some(end) = super::form_end(b, open, b.len(), &mut reads, &mut budget) else {
            break;
        };
        from = end;
        out.extend(
            expand::datum::read(b, open, end, &mut reads)
                .into_iter()
                .take(1)
                .filter(|v| v.head().is_some())
                .map(|v| (name.clone(), v)),
        );
    }
    out
}

/// The folded token `text` starts with.
fn first_token(text: &[u8]) -> Option<String> {
    let end = text.iter().position(|&c| !is_word(c)).unwrap_or(text.len());
    (end > 0).then(|| String::from_utf8_lossy(&text[..end]).to_lowercase())
}

impl Head {
    /// Whether the computed operator may be one of `names`: a name holding a piece
    /// (`-put`, `make-`: a part that starts or ends with `-`, or a string), or equal to a
    /// whole quoted symbol (`'string`).
    fn may_write_any(&self, names: &HashSet<String>, comparisons: &mut usize) -> bool {
        let cost = names.len().saturating_mul(self.parts.len());
        let Some(left) = comparisons.checked_sub(cost) else {
            *comparisons = 0;
            return false;
        };
        *comparisons = left;
        names.iter().any(|n| {
            self.parts.iter().any(|(p, piece)| match piece {
                true => n.contains(p.as_str()),
                false => n == p,
            })
        })
    }
}

/// The expressions after each `(,(` of a macro's text, read alone (the rest of the
/// macro is not read: most such macros compute no name a search wants).
fn operator_expressions(text: &[u8], reads: &dyn Fn(bool, &[u8]) -> bool) -> Vec<Val> {
    let mut reads = |plus, e: &[u8]| reads(plus, e);
    let mut budget = expand::Budget::new(usize::MAX);
    let mut out = Vec::new();
    // Each byte is read once: the search goes on after the expression read (a computed
    // operator inside another's expression is not looked for), and stops at one that
    // does not close (any later one would be read to the end of the text again).
    let mut from = 0;
    while let Some(at) = memchr::memmem::find(&text[from..], b"(,(").map(|i| from + i) {
        let open = at + 2;
        let Some(end) = super::form_end(text, open, text.len(), &mut reads, &mut budget) else {
            break;
        };
        from = end;
        out.extend(
            expand::datum::read(text, open, end, &mut reads)
                .into_iter()
                .take(1)
                .filter(|v| v.head().is_some()),
        );
    }
    out
}

/// The project functions `wanted` and those they call ([`functions::MAX_ROUNDS`]
/// rounds), added to `known`.
fn learn_functions(
    mut wanted: HashSet<String>,
    passes: &Passes,
    known: &functions::Functions,
) -> functions::Functions {
    let mut out = known.clone();
    for _ in 0..functions::MAX_ROUNDS {
        wanted.retain(|n| functions::may_be_project(n) && !out.contains_key(n));
        if wanted.is_empty() {
            break;
        }
        let mut next = HashSet::new();
        for (name, f) in (passes.functions)(&wanted) {
            next.extend(functions::called(functions::body(&f)));
            out.insert(name, Arc::new(f));
        }
        wanted = next;
    }
    out
}

/// The quoted symbols' names and the strings (folded) of `expression` and of the bodies
/// of the functions it calls, however deep among `known`.
fn literal_parts(expression: &Val, known: &functions::Functions) -> Vec<(String, bool)> {
    let mut out: HashSet<(String, bool)> = HashSet::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut stack: Vec<&Val> = vec![expression];
    while let Some(v) = stack.pop() {
        match v {
            Val::Quote(q) => {
                if let Some(n) = q.symbol_name() {
                    out.insert((n.to_string(), n.starts_with('-') || n.ends_with('-')));
                }
            }
            Val::Str(s) => {
                out.insert((s.as_str().to_lowercase(), true));
            }
            Val::List(items) => {
                if let Some(h) = v.head() {
                    if let Some((name, f)) = known.get_key_value(h) {
                        if seen.insert(name) {
                            stack.extend(functions::body(f));
                        }
                    }
                }
                stack.extend(items);
            }
            Val::Function(x) => {
                if let Some((name, f)) = x.symbol_name().and_then(|h| known.get_key_value(h)) {
                    if seen.insert(name) {
                        stack.extend(functions::body(f));
                    }
                }
            }
            Val::Dotted(items, tail) => {
                stack.extend(items);
                stack.push(tail);
            }
            Val::Backquote(x) | Val::Comma(x) | Val::Splice(x) => stack.push(x),
            _ => {}
        }
    }
    let mut parts: Vec<(String, bool)> =
        out.into_iter().filter(|p| p.0.len() >= MIN_PART).collect();
    parts.sort();
    parts
}

/// The macros that write a call of one of `names` under a computed operator, through a
/// code-writing function of `writing`, or by their templates' words a call of such a
/// macro, level by level ([`MAX_MACRO_DEPTH`] deep): the strict writers.
fn levels(
    learned: &[Learned],
    reads: &dyn Fn(bool, &[u8]) -> bool,
    heads: &[Head],
    (writing, computing): (&[(String, Function)], &HashSet<String>),
    mut names: HashSet<String>,
    comparisons: &mut usize,
) -> HashSet<String> {
    let mut strict: HashSet<String> = HashSet::new();
    let mut writes_of: HashMap<usize, Writes> = HashMap::new();
    // The functions computing an operator that may be a name wanted write code from the
    // start.
    let mut code_writers: HashSet<&str> = computing.iter().map(String::as_str).collect();
    for _ in 0..MAX_MACRO_DEPTH {
        let mut added: HashSet<String> = HashSet::new();
        for h in heads {
            if !names.contains(&h.macro_name) && h.may_write_any(&names, comparisons) {
                added.insert(h.macro_name.clone());
            }
        }
        for (name, f) in writing {
            if !code_writers.contains(name.as_str())
                && template_calls(functions::body(f))
                    .iter()
                    .any(|(n, setf)| !setf && (names.contains(n) || added.contains(n)))
            {
                code_writers.insert(name);
            }
        }
        let finder = {
            let mut level: Vec<String> = added.iter().cloned().collect();
            level.extend(code_writers.iter().map(|s| s.to_string()));
            level.extend(strict.iter().cloned());
            (!level.is_empty()).then(|| Finder::any(&level))
        };
        if let Some(finder) = finder {
            for (k, l) in learned.iter().enumerate() {
                if names.contains(&l.name) || added.contains(&l.name) || !finder.is_match(&l.text) {
                    continue;
                }
                let (calls, called) = writes_of.entry(k).or_insert_with(|| {
                    let p = parts(l, reads);
                    let body = p.get(2..).unwrap_or_default();
                    (template_calls(body), functions::called(body))
                });
                let by_template = calls
                    .iter()
                    .any(|(n, setf)| !setf && (strict.contains(n) || added.contains(n)));
                let by_function = called.iter().any(|n| code_writers.contains(n.as_str()));
                if by_template || by_function {
                    added.insert(l.name.clone());
                }
            }
        }
        added.retain(|n| !names.contains(n));
        if added.is_empty() {
            break;
        }
        names.extend(added.iter().cloned());
        strict.extend(added);
    }
    strict
}

/// Every macro of the scope (whatever its body ends in: `(defmacro use-closures () nil)`
/// is asked by `macroexpand`), with the project functions the strict writers and those
/// functions call, the global constants they read from the whole scope, and the symbol
/// properties they read.
fn environment(
    learned: &[Learned],
    reads: &dyn Fn(bool, &[u8]) -> bool,
    strict: &HashSet<String>,
    known: functions::Functions,
    writers: &Writers,
    passes: &Passes,
) -> Macros {
    let mut all: Vec<(String, expand::Macro)> = Vec::new();
    for l in reachable(learned, strict, &known) {
        let mut p = parts(l, reads);
        if p.len() < 2 {
            continue;
        }
        let body = p.split_off(2);
        let lambda_list = p.pop().unwrap_or(Val::Unknown);
        let Some(name) = p.pop().and_then(|n| n.symbol_name().map(str::to_string)) else {
            continue;
        };
        all.extend(expand::macro_from(name, lambda_list, body));
    }
    let mut wanted: HashSet<String> = HashSet::new();
    for (name, m) in &all {
        if strict.contains(name) {
            wanted.extend(functions::called(&m.body));
        }
    }
    for f in known.values() {
        wanted.extend(functions::called(functions::body(f)));
    }
    let known = learn_functions(wanted, passes, &known);
    attach_constants(&mut all, passes);
    let mut macros = Macros::default();
    // The writers by their templates' words, as they were; then those reached.
    let before: Vec<(String, Arc<expand::Macro>)> = writers
        .names
        .iter()
        .filter_map(|n| Some((n.clone(), writers.macros.get(n)?.clone())))
        .collect();
    macros.extend_shared(&before);
    macros.extend(all);
    macros.set_functions(known);
    let relevant: Vec<String> = strict.iter().cloned().collect();
    if let Some(store) = (passes.properties)(&macros, &relevant) {
        macros.set_properties(store);
    }
    macros
}

/// The learned macros the strict writers' bodies and the functions `known` name (a
/// symbol anywhere, quoted too: `(macroexpand '(use-closures) env)`), and those their
/// bodies name, [`MAX_MACRO_DEPTH`] deep; the last definition of a name.
fn reachable<'l>(
    learned: &'l [Learned],
    strict: &HashSet<String>,
    known: &functions::Functions,
) -> Vec<&'l Learned> {
    let by_name: HashMap<&str, &Learned> = learned.iter().map(|l| (l.name.as_str(), l)).collect();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut level: Vec<&str> = strict.iter().map(String::as_str).collect();
    let mut symbols: HashSet<String> = HashSet::new();
    for f in known.values() {
        for b in functions::body(f) {
            expand::any_node(b, &mut |n| {
                symbols.extend(n.symbol_name().map(str::to_string));
                false
            });
        }
    }
    level.extend(
        symbols
            .iter()
            .map(String::as_str)
            .filter(|s| by_name.contains_key(s)),
    );
    let mut out = Vec::new();
    for _ in 0..=MAX_MACRO_DEPTH {
        let mut next: Vec<&str> = Vec::new();
        for name in level {
            let Some(l) = by_name.get(name).copied() else {
                continue;
            };
            if !seen.insert(l.name.as_str()) {
                continue;
            }
            out.push(l);
            // The words of its text that name a learned macro.
            for word in l.text.split(|c| !is_word(*c)) {
                let w = String::from_utf8_lossy(word).to_lowercase();
                if let Some((k, _)) = by_name.get_key_value(w.as_str()) {
                    next.push(k);
                }
            }
        }
        if next.is_empty() {
            break;
        }
        level = next;
    }
    out
}

/// Whether `c` may be in a symbol's name as the scope writes it.
fn is_word(c: u8) -> bool {
    !c.is_ascii_whitespace() && !matches!(c, b'(' | b')' | b'\'' | b'`' | b',' | b'"' | b';' | b'#')
}

/// Gives each macro the constant values of the global variables (`*x*`, `+x+`) it
/// reads, from the `defvar`/`defparameter`/`defconstant` of any file of the scope; a
/// name defined twice with different values is left unknown.
fn attach_constants(all: &mut [(String, expand::Macro)], passes: &Passes) {
    let global = |n: &str| {
        n.len() > 2
            && ((n.starts_with('*') && n.ends_with('*'))
                || (n.starts_with('+') && n.ends_with('+')))
    };
    let mut wanted: HashSet<String> = HashSet::new();
    for (_, m) in all.iter() {
        for b in m.body.iter() {
            expand::any_node(b, &mut |n| {
                if let Some(s) = n.symbol_name().filter(|s| global(s)) {
                    wanted.insert(s.to_string());
                }
                false
            });
        }
    }
    if wanted.is_empty() {
        return;
    }
    let mut values: HashMap<String, Option<Val>> = HashMap::new();
    for (name, value) in (passes.constants)(&wanted) {
        values
            .entry(name)
            .and_modify(|v| {
                if v.as_ref() != Some(&value) {
                    *v = None;
                }
            })
            .or_insert(Some(value));
    }
    for (_, m) in all.iter_mut() {
        let mut read: Vec<(String, Val)> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        for b in m.body.iter() {
            expand::any_node(b, &mut |n| {
                if let Some(Some(v)) = n.symbol_name().and_then(|s| values.get(s)) {
                    let s = n.symbol_name().unwrap_or_default().to_string();
                    if seen.insert(s.clone()) {
                        read.push((s, v.clone()));
                    }
                }
                false
            });
        }
        if !read.is_empty() && m.globals.is_empty() {
            m.globals = Arc::new(read);
        }
    }
}
