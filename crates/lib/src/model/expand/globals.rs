//! The global variables a definer macro reads (clx's `def-clx-class` choosing between a
//! class and a structure on `*def-clx-class-use-defclass*`): a `defvar` or
//! `defparameter` of the macro's own file whose initial value is a constant (a number,
//! a string, `t`, `nil`, a keyword, a quoted datum; after the features' branches) is
//! that value while the macro is instantiated, unless the file assigns the variable
//! (`setf`, `setq`, `psetf`, `psetq`, `incf`, `decf`, `push`, `pushnew`, `pop` of it, or a
//! `let` rebinding it). A form with feature branches left undecided reads as more
//! than one value and is not a `defvar` of this shape: unknown. Another file's
//! assignment is not looked for; the value is the one the macro's file gives.

use super::datum::{read, Val};
use super::{each_form_holding, Macro};
use std::hash::BuildHasher;
// The keys are symbol names of the scope's macros (hostile input): foldhash seeded per
// process, as the macro table's; SipHash was a tenth of learning a scope's macros.
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
type HashSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

/// Operators whose first argument they assign (`push`/`pushnew`: their second).
const ASSIGNING: [&str; 9] = [
    "setf", "setq", "psetf", "psetq", "incf", "decf", "pop", "push", "pushnew",
];

/// Gives each macro of `macros` (learned from `b`) the constant values of the file's
/// global variables its body reads. Linear in the file: one pass over its words for
/// the assignments of the variables the macros read.
pub(crate) fn attach(
    b: &[u8],
    macros: &mut [(String, Macro)],
    reads: &mut dyn FnMut(bool, &[u8]) -> bool,
) {
    if macros.is_empty() {
        return;
    }
    let symbols: Vec<HashSet<&str>> = macros.iter().map(|(_, m)| symbols_of(m)).collect();
    let all: HashSet<&str> = symbols.iter().flatten().copied().collect();
    let known = constants(b, &all, false, reads);
    if known.is_empty() {
        return;
    }
    // A variable defined twice in the file (a `defparameter` again, a `defvar` in two
    // feature branches) has no one value: unknown.
    let mut values: HashMap<&str, Option<&Val>> = HashMap::default();
    for (name, value) in &known {
        values
            .entry(name.as_str())
            .and_modify(|v| *v = None)
            .or_insert(Some(value));
    }
    let values: HashMap<&str, &Val> = values
        .into_iter()
        .filter_map(|(n, v)| Some((n, v?)))
        .collect();
    // Per macro, the variables it reads (its symbols that are such variables): linear
    // in the macros' size, however many variables the file has.
    let read_by: Vec<Vec<&str>> = symbols
        .iter()
        .map(|symbols| {
            let mut names: Vec<&str> = symbols
                .iter()
                .copied()
                .filter(|n| values.contains_key(n))
                .collect();
            names.sort_unstable();
            names
        })
        .collect();
    let wanted: HashSet<&str> = read_by.iter().flatten().copied().collect();
    if wanted.is_empty() {
        return;
    }
    let assigned = assigned(&b.to_ascii_lowercase(), &wanted);
    let attached: Vec<Vec<(String, Val)>> = read_by
        .iter()
        .map(|names| {
            names
                .iter()
                .filter(|n| !assigned.contains(*n))
                .map(|n| (n.to_string(), values[n].clone()))
                .collect()
        })
        .collect();
    for ((_, m), globals) in macros.iter_mut().zip(attached) {
        if !globals.is_empty() {
            m.globals = std::sync::Arc::new(globals);
            // The names it builds may come from the values: any.
            m.shape = super::shape::Shape::default();
        }
    }
}

/// The symbols `m`'s lambda list and body name.
fn symbols_of(m: &Macro) -> HashSet<&str> {
    let mut out = HashSet::default();
    let mut stack: Vec<&Val> = std::iter::once(&m.lambda_list)
        .chain(m.body.iter())
        .collect();
    while let Some(v) = stack.pop() {
        if let Val::Sym(w) = v {
            out.insert(w.name.as_str());
        }
        stack.extend(v.children());
    }
    out
}

/// The `defvar`/`defparameter` forms of `b` (at top level or inside one, as
/// `eval-when`) whose initial value is a constant: name and value; `defconstant`s too
/// when `with_constants`.
/// Only the forms defining a name of `wanted` (a macro's symbol) are read.
pub(crate) fn constants<S: BuildHasher>(
    b: &[u8],
    wanted: &std::collections::HashSet<&str, S>,
    with_constants: bool,
    reads: &mut dyn FnMut(bool, &[u8]) -> bool,
) -> Vec<(String, Val)> {
    let mut hits: Vec<usize> = if with_constants {
        definition_hits(b, wanted)
    } else {
        ["defvar", "DEFVAR", "defparameter", "DEFPARAMETER"]
            .iter()
            .flat_map(|w| memchr::memmem::find_iter(b, w.as_bytes()).map(move |at| (at, w.len())))
            .filter(|&(at, len)| {
                super::functions::token_after(b, at + len)
                    .is_some_and(|n| wanted.contains(n.as_str()))
            })
            .map(|(at, _)| at)
            .collect()
    };
    hits.sort_unstable();
    let mut out = Vec::new();
    each_form_holding(b, &hits, &mut |start, end| {
        for form in read(b, start, end, reads) {
            let mut stack = vec![&form];
            while let Some(v) = stack.pop() {
                if matches!(v.head(), Some("defvar" | "defparameter"))
                    || (with_constants && v.head() == Some("defconstant"))
                {
                    out.extend(constant_definition(v));
                    continue;
                }
                if let Val::List(items) = v {
                    stack.extend(items.iter());
                }
            }
        }
    });
    out
}

/// Where `(defvar`, `(defparameter` or `(defconstant` (in either case) defines a name of
/// `wanted`: one pass over `b` for `(def` and one for `(DEF`.
fn definition_hits<S: BuildHasher>(
    b: &[u8],
    wanted: &std::collections::HashSet<&str, S>,
) -> Vec<usize> {
    const DEFINERS: [&[u8]; 3] = [b"var", b"parameter", b"constant"];
    ["(def", "(DEF"]
        .iter()
        .flat_map(|w| memchr::memmem::find_iter(b, w.as_bytes()))
        .filter_map(|at| {
            let rest = &b[at + 4..];
            let len = DEFINERS
                .iter()
                .find(|d| rest.len() >= d.len() && rest[..d.len()].eq_ignore_ascii_case(d))?
                .len();
            let name = super::functions::token_after(b, at + 4 + len)?;
            wanted.contains(name.as_str()).then_some(at + 1)
        })
        .collect()
}

/// `(defvar NAME VALUE [DOC])` with a constant VALUE.
fn constant_definition(form: &Val) -> Option<(String, Val)> {
    let items = form.items()?;
    let (name, value) = match items {
        [_, name, value] => (name, value),
        [_, name, value, Val::Str(_)] => (name, value),
        _ => return None,
    };
    let name = name.symbol_name()?.to_string();
    Some((name, value.literal_value()?))
}

/// Which of `names` (folded) the lowercased text `lower` assigns or rebinds: a word
/// right after an assigning operator, the place of `push`, or the first binding of a
/// `let`. Textual, so a quoted or commented occurrence counts too (the value is then not
/// used: safe). Each name's whole-word occurrences are found with `memmem` and the one
/// or two words before each looked at, instead of every word of the text: each stretch
/// of text is stepped over for at most the two occurrences after it (linear).
pub(crate) fn assigned<'a, S: BuildHasher>(
    lower: &[u8],
    names: &std::collections::HashSet<&'a str, S>,
) -> HashSet<&'a str> {
    if names.len() > MAX_SEARCHED_NAMES {
        return assigned_by_words(lower, names);
    }
    let mut out = HashSet::default();
    // A name holding a delimiter is never a word (and would let one occurrence hide
    // another from `find_iter`).
    for name in names
        .iter()
        .filter(|n| !n.is_empty() && !n.bytes().any(|c| is_word_delimiter(&c)))
    {
        let len = name.len();
        let whole = |at: usize| {
            (at == 0 || is_word_delimiter(&lower[at - 1]))
                && lower.get(at + len).is_none_or(is_word_delimiter)
        };
        let hit = memchr::memmem::find_iter(lower, name.as_bytes())
            .filter(|&at| whole(at))
            .any(|at| {
                let (before, at) = word_before(lower, at);
                let (before_that, _) = word_before(lower, at);
                word_is(before, &ASSIGNING)
                    || word_is(before_that, &["push", "pushnew"])
                    || word_is(before, &["let", "let*"])
            });
        if hit {
            out.insert(*name);
        }
    }
    out
}

/// Names searched one `memmem` pass each at most ([`assigned`]); past them one pass
/// over every word of the text is cheaper.
const MAX_SEARCHED_NAMES: usize = 8;

/// [`assigned`] in one pass over every word of `lower`.
pub(super) fn assigned_by_words<'a, S: BuildHasher>(
    lower: &[u8],
    names: &std::collections::HashSet<&'a str, S>,
) -> HashSet<&'a str> {
    let mut out = HashSet::default();
    let (mut before, mut before_that): (&[u8], &[u8]) = (b"", b"");
    for word in lower.split(is_word_delimiter).filter(|w| !w.is_empty()) {
        if let Some(name) = std::str::from_utf8(word).ok().and_then(|w| names.get(w)) {
            if word_is(before, &ASSIGNING)
                || word_is(before_that, &["push", "pushnew"])
                || word_is(before, &["let", "let*"])
            {
                out.insert(*name);
            }
        }
        before_that = before;
        before = word;
    }
    out
}

/// The bytes that end a word for [`assigned`].
fn is_word_delimiter(c: &u8) -> bool {
    c.is_ascii_whitespace() || matches!(c, b'(' | b')' | b'\'' | b'`' | b',')
}

/// Whether `word` is one of `among`.
fn word_is(word: &[u8], among: &[&str]) -> bool {
    among.iter().any(|a| a.as_bytes() == word)
}

/// The word of `lower` before position `at` (empty at the start), and where it starts.
fn word_before(lower: &[u8], at: usize) -> (&[u8], usize) {
    let mut end = at;
    while end > 0 && is_word_delimiter(&lower[end - 1]) {
        end -= 1;
    }
    let mut start = end;
    while start > 0 && !is_word_delimiter(&lower[start - 1]) {
        start -= 1;
    }
    (&lower[start..end], start)
}
