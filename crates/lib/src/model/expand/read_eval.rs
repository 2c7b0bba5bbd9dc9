//! Read-time forms inside a call of a learned macro (cl-irc's
//! `(create-irc-message-classes #.(remove-duplicates (mapcar #'second *reply-names*)))`):
//! the reader gives the macro the value of the `#.` form, so the form is computed by the
//! evaluator (`eval/`) before the call is instantiated, over the scope's global
//! variables whose value is known ([`known_globals`]: a `defvar`, `defparameter` or
//! `defconstant` of a constant, defined once in the scope, that no file defining it
//! assigns). A form that cannot be computed is unknown, as before. Only text is read:
//! nothing is run.

use super::datum::{print, read_keeping_read_time, Val, READ_TIME};
use super::{eval, Budget, Env, Macros};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

/// The longest text after a `#.` looked at for the global variables it names.
const MAX_SCANNED: usize = 4096;

/// The most global variable names one file's read-time forms ask for.
const MAX_NAMES_PER_FILE: usize = 64;

/// The text of a call as far as the names it can make go: `text`, followed by the
/// printed values of the known global variables its read-time forms name (none
/// without a known global in the scope: `text` as it is, nothing looked at). The values
/// printed are charged to `budget` by their size ([`Val::size`]); `None` once it
/// is spent.
pub(crate) fn with_values<'t>(
    text: &'t [u8],
    macros: &Macros,
    budget: &mut Budget,
) -> Option<Cow<'t, [u8]>> {
    if macros.read_globals.is_empty() {
        return Some(Cow::Borrowed(text));
    }
    let mut printed = String::new();
    for (at, end) in outermost_forms(text, hits(text)) {
        let form = &text[at + 2..end];
        for name in earmuffed_words(form)
            .into_iter()
            .chain(super::enums::asked(form))
        {
            if let Some(value) = macros.read_globals.get(&name) {
                budget.spend(value.size())?;
                printed.push(' ');
                print(value, &mut printed);
            }
        }
    }
    if printed.is_empty() {
        return Some(Cow::Borrowed(text));
    }
    let mut out = text.to_vec();
    out.extend_from_slice(printed.as_bytes());
    Some(Cow::Owned(out))
}

/// Where `#.` occurs in `b` (anywhere: inside a form, in a string or a comment).
pub(crate) fn hits(b: &[u8]) -> impl Iterator<Item = usize> + '_ {
    memchr::memmem::find_iter(b, b"#.")
}

/// Whether the text of a call holds a read-time form.
pub(crate) fn holds_read_time(text: &[u8]) -> bool {
    memchr::memmem::find(text, b"#.").is_some()
}

/// The global variables the read-time forms of `b` may read, each with the operator of
/// the list the form is in (a call of a learned macro, once the macros are known): the
/// words written `*x*` or `+x+` in the text of each `#.` form that no other holds (up to
/// its closing parenthesis, at most [`MAX_SCANNED`] bytes), folded; the operator is the
/// word after the nearest unclosed `(` before the form (at most [`MAX_SCANNED`] bytes
/// back). Textual: a word in a string counts too, a parenthesis in one may give another
/// operator (a variable is only looked for when its operator is a learned macro's).
/// `hits`: where `#.` occurs in `b` ([`hits`]).
pub(crate) fn variables(b: &[u8], hits: &[usize]) -> HashSet<(String, String)> {
    let mut out = HashSet::new();
    // Each (list, name) once: an operator's word may be long, and many forms in its list.
    let mut seen = HashSet::new();
    let mut operators = Operators::new(b);
    for (at, end) in outermost_forms(b, hits.iter().copied()) {
        let form = &b[at + 2..end];
        let mut named = earmuffed_words(form);
        named.extend(super::enums::asked(form));
        if named.is_empty() {
            continue;
        }
        let Some((list, operator)) = operators.enclosing(at) else {
            continue;
        };
        for name in named {
            if out.len() < MAX_NAMES_PER_FILE && seen.insert((list, name.clone())) {
                out.insert((operator.to_string(), name));
            }
        }
    }
    out
}

/// Of the `#.` at `hits` (ascending), those that no earlier one's form holds, each with
/// the end of its form: `b[at + 2..end]`, at most [`MAX_SCANNED`] bytes. A nested form's
/// words are in the outer one's text; scanning each anew read a file of unclosed `#.(`
/// lines once per line, [`MAX_SCANNED`] bytes a hit.
fn outermost_forms<'b>(
    b: &'b [u8],
    hits: impl IntoIterator<Item = usize> + 'b,
) -> impl Iterator<Item = (usize, usize)> + 'b {
    let mut held_to = 0;
    hits.into_iter().filter_map(move |at| {
        if at < held_to {
            return None;
        }
        let text = &b[at + 2..b.len().min(at + 2 + MAX_SCANNED)];
        let end = at + 2 + form_end(text);
        held_to = end;
        Some((at, end))
    })
}

/// Where the datum at the start of `text` ends (textually: its closing parenthesis, or
/// the end of a word).
fn form_end(text: &[u8]) -> usize {
    let mut open = 0usize;
    for (k, &c) in text.iter().enumerate() {
        match c {
            b'(' => open += 1,
            b')' if open <= 1 => return k,
            b')' => open -= 1,
            // `#.+foo+`, `#.*foo*`: the word alone.
            c if open == 0 && (c.is_ascii_whitespace() || c == b';') => return k,
            _ => {}
        }
    }
    text.len()
}

/// The words of `text` written `*x*` or `+x+` (after a package prefix), folded.
fn earmuffed_words(text: &[u8]) -> Vec<String> {
    let delimiter = |c: &u8| c.is_ascii_whitespace() || b"()'`,#\"".contains(c);
    text.split(delimiter)
        .map(|word| word.rsplit(|&c| c == b':').next().unwrap_or(word))
        .filter(|word| {
            let earmuffed = |m: u8| word.len() >= 3 && word[0] == m && word[word.len() - 1] == m;
            earmuffed(b'*') || earmuffed(b'+')
        })
        .map(|word| String::from_utf8_lossy(word).to_ascii_lowercase())
        .collect()
}

/// The operators of the lists left open before ascending positions of `b`, from one pass
/// over it: the parentheses seen so far on a stack (textually), each operator read once.
/// Looking back from each `#.` for its unclosed `(` read up to [`MAX_SCANNED`] bytes a hit.
struct Operators<'b> {
    b: &'b [u8],
    /// How far `open` is up to date.
    seen: usize,
    open: Vec<usize>,
    /// The end of the word after each `(` asked for, and its operator (by the asking
    /// `#.`, ending there, when it is inside the word).
    words: HashMap<usize, (usize, Option<String>)>,
}

impl<'b> Operators<'b> {
    fn new(b: &'b [u8]) -> Self {
        Operators {
            b,
            seen: 0,
            open: Vec::new(),
            words: HashMap::new(),
        }
    }

    /// The operator of the list left open at `at` (not before the last position asked):
    /// the word after its `(`, up to `at`; `None` when there is none within
    /// [`MAX_SCANNED`] bytes. With it, the position that names it: its `(` (or `at`).
    fn enclosing(&mut self, at: usize) -> Option<(usize, &str)> {
        for &c in &self.b[self.seen..at] {
            match c {
                b'(' => self.open.push(self.seen),
                b')' => {
                    self.open.pop();
                }
                _ => {}
            }
            self.seen += 1;
        }
        let open = *self.open.last().filter(|&&o| at - o <= MAX_SCANNED)?;
        let b = self.b;
        let word = |end: usize| (end, operator(&b[open + 1..end]));
        let (end, _) = *self.words.entry(open).or_insert_with(|| {
            let rest = &b[open + 1..];
            let delimiter = |c: &u8| c.is_ascii_whitespace() || b"()'`,\";".contains(c);
            word(open + 1 + rest.iter().position(delimiter).unwrap_or(rest.len()))
        });
        // A `#.` inside the operator's own word: the word up to it (read at most once
        // per [`MAX_SCANNED`] bytes, since the form holds the rest of the word).
        let key = if end > at { at } else { open };
        let (_, operator) = self.words.entry(key).or_insert_with(|| word(at));
        Some((key, operator.as_deref()?))
    }
}

/// An operator's word without its package prefix, folded; `None` when empty.
fn operator(word: &[u8]) -> Option<String> {
    let word = word.rsplit(|&c| c == b':').next().unwrap_or(word);
    (!word.is_empty()).then(|| String::from_utf8_lossy(word).to_ascii_lowercase())
}

/// What one file says of the global variables: the constant values it defines them with
/// (each definition once), and the names it assigns.
pub(crate) type FileGlobals = (Vec<(String, Val)>, HashSet<String>);

/// The global variables of `wanted` that `b` defines with a constant value (`defvar`,
/// `defparameter`, `defconstant`; after the features' branches), each as often as it is
/// defined, and those `b` assigns.
pub(crate) fn definitions(
    b: &[u8],
    wanted: &HashSet<String>,
    reads: &mut dyn FnMut(bool, &[u8]) -> bool,
) -> FileGlobals {
    let mut defined = super::enums::values(b, wanted, reads);
    let wanted: HashSet<&str> = wanted.iter().map(String::as_str).collect();
    defined.extend(super::globals::constants(b, &wanted, true, reads));
    if defined.is_empty() {
        return (defined, HashSet::new());
    }
    let names: HashSet<&str> = defined.iter().map(|(n, _)| n.as_str()).collect();
    let assigned = super::globals::assigned(&b.to_ascii_lowercase(), &names)
        .into_iter()
        .map(str::to_string)
        .collect();
    (defined, assigned)
}

/// The known values of the scope's global variables, from every file's
/// [`definitions`]: a variable defined once, and assigned by no file that defines it.
pub(crate) fn known_globals(per_file: Vec<FileGlobals>) -> HashMap<String, Val> {
    let mut values: HashMap<String, Option<Val>> = HashMap::new();
    let mut assigned = HashSet::new();
    for (defined, written) in per_file {
        for (name, value) in defined {
            values
                .entry(name)
                .and_modify(|v| *v = None)
                .or_insert(Some(value));
        }
        assigned.extend(written);
    }
    values
        .into_iter()
        .filter(|(n, _)| !assigned.contains(n))
        .filter_map(|(n, v)| Some((n, v?)))
        .collect()
}

/// The call `b[start..end]` read with the value of each of its read-time forms computed
/// (unknown where it cannot be), over the scope's known global variables and the project
/// functions `macros` learned; `None` when it cannot be read or the budget is spent.
pub(crate) fn read_call(
    b: &[u8],
    start: usize,
    end: usize,
    reads: &dyn Fn(bool, &[u8]) -> bool,
    macros: &Macros,
    budget: &mut Budget,
) -> Option<Val> {
    let (globals, functions) = (&macros.read_globals, &macros.functions);
    let mut reads = |plus, e: &[u8]| reads(plus, e);
    let form = read_keeping_read_time(b, start, end, &mut reads)
        .into_iter()
        .next()?;
    let mut env = Env {
        globals: functions.clone(),
        ..Env::default()
    };
    // Only the variables the call's forms name are bound.
    let mut named = Vec::new();
    symbols(&form, &mut named);
    for name in named {
        if let Some(value) = globals.get(name) {
            budget.spend(value.size())?;
            env.bind(name, value.clone());
        }
        // An enum of that name, for `foreign-enum-keyword-list` (`enums.rs`).
        let key = super::enums::key(name);
        if let Some(value) = globals.get(&key) {
            budget.spend(value.size())?;
            env.bind(&key, value.clone());
        }
    }
    resolve(form, &env, budget, 0)
}

/// The symbols inside `v`'s read-time forms.
fn symbols<'v>(v: &'v Val, out: &mut Vec<&'v str>) {
    let mut stack = vec![(v, false)];
    while let Some((v, inside)) = stack.pop() {
        let inside = inside || v.head() == Some(READ_TIME);
        if let (true, Some(name)) = (inside, v.symbol_name()) {
            out.push(name);
        }
        stack.extend(v.children().map(|c| (c, inside)));
    }
}

/// `v` with each read-time form replaced by its value (the innermost first, as the
/// reader reads them).
fn resolve(v: Val, env: &Env, budget: &mut Budget, depth: usize) -> Option<Val> {
    if depth > super::MAX_DEPTH {
        return Some(Val::Unknown);
    }
    let again = |items: Vec<Val>, budget: &mut Budget| -> Option<Vec<Val>> {
        items
            .into_iter()
            .map(|x| resolve(x, env, budget, depth + 1))
            .collect()
    };
    let boxed =
        |x: Box<Val>, budget: &mut Budget| resolve(*x, env, budget, depth + 1).map(Box::new);
    Some(match v {
        Val::List(items) if items.first().and_then(Val::symbol_name) == Some(READ_TIME) => {
            let form = items.into_iter().nth(1)?;
            let form = resolve(form, env, budget, depth + 1)?;
            // Evaluated in a copy of the variables: the form's own assignments stay in it.
            let mut scope = env.clone();
            eval::exec(&form, &mut scope, budget, depth)?
        }
        Val::List(items) => Val::List(again(items, budget)?),
        Val::Dotted(items, tail) => Val::Dotted(again(items, budget)?, boxed(tail, budget)?),
        Val::Quote(x) => Val::Quote(boxed(x, budget)?),
        Val::Backquote(x) => Val::Backquote(boxed(x, budget)?),
        Val::Comma(x) => Val::Comma(boxed(x, budget)?),
        Val::Splice(x) => Val::Splice(boxed(x, budget)?),
        Val::Function(x) => Val::Function(boxed(x, budget)?),
        atom => atom,
    })
}
