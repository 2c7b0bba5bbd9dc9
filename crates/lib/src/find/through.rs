//! Calls that the project's own macros write into their callers
//! (docs/find.md#calls-through-the-projects-macros): `(with-aggregate/object (s) ...)`
//! calls `write-delimiter` when the macro's template does. A callers search learns the
//! scope's `defmacro`s first ([`learn`]); a call of one whose expansion calls the symbol
//! is a call of it *through* that macro, at the macro call.
//!
//! Prefilter: only a macro whose templates write a call of the symbol, or of a macro that
//! does ([`MAX_MACRO_DEPTH`] deep), can write one ([`writers_of`]: only the macros whose
//! text holds such a name are read); only the forms that call such a macro are
//! instantiated.
//!
//! Precise where the call can be instantiated in full ([`crate::model::expand`]): the
//! expansion is read as code by the rules of [`super::calls`], and the calls of macros it
//! writes are expanded in turn. A macro that cannot be instantiated (its body does not end
//! in a template, the call does not fit its lambda list), or whose expansion holds what
//! only evaluation would compute, is taken at its templates' word: every call of it calls
//! what they call. Bounded: a file's instantiations share one step
//! budget ([`Budget::for_file`]), linear in the file.

use super::calls::{calls_in, token_name, Call};
use super::{ScopePart, Search, SymbolQuery, Target};
use crate::cancel::CancelToken;
use crate::guard::{Guard, LoadedFile};
use crate::model::expand::datum::{print, read, Val, UNKNOWN};
use crate::model::expand::{self, Budget, Lookup, Macros, MAX_MACRO_DEPTH};
use crate::scan::{each_event_read, Event};
use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;

/// A `defmacro` of the scope as first found: its name and its text, read into data only
/// when it may write the call.
struct Learned {
    name: String,
    text: Vec<u8>,
}

/// The macros of the scope whose expansions may call the searched symbol.
#[derive(Default)]
pub(crate) struct Writers {
    /// Their folded names.
    names: HashSet<String>,
    /// Bit `n` set when a name is `n` bytes long (`n` < 128): a plain token of another
    /// length is told apart without a look-up ([`Writers::is_writer`]).
    lengths: u128,
    /// Those that can be instantiated.
    macros: Macros,
    /// Where their names may be written.
    finder: Option<super::literal::Finder>,
    /// Those that write the call only under an operator they compute
    /// ([`computed`]): their calls call the symbol only when the expansion, computed in
    /// full, does.
    strict: HashSet<String>,
    /// What the strict writers' expansions are computed with ([`computed`]): every
    /// macro they reach, the functions, constants and properties they read.
    strict_macros: Macros,
}

impl Writers {
    /// The writers' folded names.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    /// Where the writers' names may be in the haystack (case-insensitive text), in order.
    pub(crate) fn hits(&self, hay: &super::literal::Haystack) -> Vec<usize> {
        self.finder
            .as_ref()
            .map_or_else(Vec::new, |f| f.starts(hay))
    }

    /// Whether a writer's name may be in the haystack.
    pub(crate) fn is_in(&self, hay: &super::literal::Haystack) -> bool {
        self.finder.as_ref().is_some_and(|f| f.is_in(hay))
    }

    /// Whether the symbol token `token` names one of the macros (without allocating for
    /// a plain token: every operator of every form searched is asked).
    pub(crate) fn is_writer(&self, token: &[u8]) -> bool {
        if self.names.is_empty() {
            return false;
        }
        let mut buffer = [0u8; 64];
        let plain = token.len() <= buffer.len()
            && token
                .iter()
                .all(|&c| c.is_ascii() && !matches!(c, b'|' | b'\\' | b':'));
        if !plain {
            return self.names.contains(&token_name(token));
        }
        // The token is its name's length: most operators are not a writer's length.
        if self.lengths & (1u128 << token.len()) == 0 {
            return false;
        }
        for (to, from) in buffer.iter_mut().zip(token) {
            *to = from.to_ascii_lowercase();
        }
        std::str::from_utf8(&buffer[..token.len()]).is_ok_and(|n| self.names.contains(n))
    }
}

/// Whether the search is one that calls through macros serve.
pub(crate) fn wanted(search: &Search) -> bool {
    matches!(search.target, Target::Callers(_))
}

/// The scope's files, for the passes that read them again: through the guard (a scope
/// on disk), or already in memory (an editor's buffers).
enum Files<'a> {
    Scope {
        guard: &'a Guard,
        parts: &'a [ScopePart],
        cancel: &'a CancelToken,
    },
    Memory(&'a [(&'a str, &'a [u8])]),
}

impl Files<'_> {
    /// `work` over the bytes of each file, in order.
    fn map<R: Send>(&self, search: &Search, work: impl Fn(&[u8]) -> R + Sync) -> Vec<R> {
        match self {
            Files::Scope {
                guard,
                parts,
                cancel,
            } => search.map_parts(guard, parts, cancel, |file: &LoadedFile| work(&file.bytes)),
            Files::Memory(files) => files.iter().map(|(_, b)| work(b)).collect(),
        }
    }

    /// `work(index, bytes)` over each file, in order (`index` in the scope's order),
    /// with the file's name as answers show it (`None`: it cannot be read).
    fn map_indexed<R: Send>(
        &self,
        search: &Search,
        work: impl Fn(usize, &[u8]) -> R + Sync,
    ) -> Vec<(String, Option<R>)> {
        match self {
            Files::Scope {
                guard,
                parts,
                cancel,
            } => {
                super::learn_cap::map_scope(search, guard, parts, cancel, |i, file: &LoadedFile| {
                    work(i, &file.bytes)
                })
            }
            Files::Memory(files) => files
                .iter()
                .enumerate()
                .map(|(i, (name, b))| (name.to_string(), Some(work(i, b))))
                .collect(),
        }
    }

    /// [`Files::map`] of a pass that finds several things per file, flattened.
    fn flat_map<T: Send>(&self, search: &Search, work: impl Fn(&[u8]) -> Vec<T> + Sync) -> Vec<T> {
        self.map(search, work).into_iter().flatten().collect()
    }
}

/// Learns the macros of `parts` that may write a call of the searched symbol into
/// `search.through`, with the searches for their names.
pub(crate) fn learn(guard: &Guard, parts: &[ScopePart], search: &mut Search, cancel: &CancelToken) {
    let files = Files::Scope {
        guard,
        parts,
        cancel,
    };
    learn_from(&files, search);
}

/// [`learn`] over files already in memory.
pub(crate) fn learn_in_memory(files: &[(&str, &[u8])], search: &mut Search) {
    learn_from(&Files::Memory(files), search);
}

fn learn_from(files: &Files, search: &mut Search) {
    if !wanted(search) {
        return;
    }
    let writers = {
        let s: &Search = search;
        let reads = |plus, e: &[u8]| s.reads(plus, e);
        // Whether a file spells the searched name (where a function computing an
        // operator may name it).
        let name = match &s.target {
            Target::Callers(q) => Some(super::literal::Finder::any(std::slice::from_ref(&q.name))),
            _ => None,
        };
        let spells = |b: &[u8]| name.as_ref().is_some_and(|f| f.is_match(b));
        // The macros' texts, read into data later, within the scope's bound
        // (`learn_cap`): a text's bytes bound the value nodes it is read into.
        let cap = &s.learn_cap;
        let per_file = files.map_indexed(s, |i, b| {
            if cap.excludes(i) {
                return (Vec::new(), computed::Local::default());
            }
            let found = defmacros(b, &reads);
            if !cap.finish(i, found.iter().map(|l| l.text.len()).sum()) {
                return (Vec::new(), computed::Local::default());
            }
            let local = computed::local_functions(b, &found, &reads, &spells);
            (found, local)
        });
        let mut names = Vec::with_capacity(per_file.len());
        let (mut learned, mut local): (Vec<Vec<Learned>>, Vec<computed::Local>) = per_file
            .into_iter()
            .map(|(name, answer)| {
                names.push(name);
                answer.unwrap_or_default()
            })
            .unzip();
        if let Some(cut) =
            super::learn_cap::keep_within(&mut learned, |l| l.text.len(), cap.limit())
        {
            cap.stop_at(&names[cut]);
            local.truncate(cut + 1);
        }
        let mut learned: Vec<Learned> = learned.into_iter().flatten().collect();
        let local = computed::Local::merge(local);
        let mut template_calls = TemplateCalls::new();
        let made = made::learn(files, s, &learned, &mut template_calls);
        learned.extend(made);
        let functions = |wanted: &HashSet<String>| {
            files.flat_map(s, |b| expand::functions::learn_any(b, wanted, &reads))
        };
        let holding = |finder: &super::literal::Finder| {
            files.flat_map(s, |b| defuns_holding(b, finder, &reads))
        };
        let constants =
            |wanted: &HashSet<String>| files.flat_map(s, |b| constants_of(b, wanted, &reads));
        let properties = |macros: &Macros, relevant: &[String]| {
            let setters = expand::properties::setters(macros, relevant)?;
            let stores = files.map(s, |b| {
                let mut reads = |plus, e: &[u8]| s.reads(plus, e);
                expand::properties::of_file(b, macros, &setters, &mut reads)
            });
            Some(expand::properties::Store::merge(stores))
        };
        let passes = computed::Passes {
            functions: &functions,
            holding: &holding,
            constants: &constants,
            properties: &properties,
        };
        adopt(&learned, local, s, &passes, &mut template_calls)
    };
    if let Some(writers) = writers {
        search.through = writers;
    }
}

/// The `defun`s of `b` whose text holds a name `finder` looks for and a template.
fn defuns_holding(
    b: &[u8],
    finder: &super::literal::Finder,
    reads: &dyn Fn(bool, &[u8]) -> bool,
) -> Vec<(String, expand::Function)> {
    let hits = expand::functions::defun_forms(b);
    if hits.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    expand::each_form_holding(b, &hits, &mut |start, end| {
        let text = &b[start..end];
        if memchr::memchr(b'`', text).is_none() || !finder.is_match(text) {
            return;
        }
        let names: HashSet<String> = expand::functions::defined_names(text)
            .0
            .into_iter()
            .collect();
        out.extend(expand::functions::learn_any(text, &names, reads));
    });
    out
}

/// The constant values `b`'s `defvar`, `defparameter` and `defconstant` forms give the
/// names of `wanted`.
fn constants_of(
    b: &[u8],
    wanted: &HashSet<String>,
    reads: &dyn Fn(bool, &[u8]) -> bool,
) -> Vec<(String, Val)> {
    let wanted: HashSet<&str> = wanted.iter().map(String::as_str).collect();
    let mut reads = |plus, e: &[u8]| reads(plus, e);
    expand::globals::constants(b, &wanted, true, &mut reads)
}

/// The writers among `learned` (and those [`computed`] finds with `passes`), with the
/// searches for their names; `None` when there is none.
fn adopt(
    learned: &[Learned],
    local: computed::Local,
    search: &Search,
    passes: &computed::Passes,
    template_calls: &mut TemplateCalls,
) -> Option<Writers> {
    let Target::Callers(query) = &search.target else {
        return None;
    };
    let reads = |plus, e: &[u8]| search.reads(plus, e);
    let mut writers = writers_of(learned, query, &reads, template_calls);
    computed::widen(learned, local, query, &mut writers, &reads, passes);
    if writers.names.is_empty() {
        return None;
    }
    let mut names: Vec<String> = writers.names.iter().cloned().collect();
    names.sort();
    writers.lengths = names
        .iter()
        .filter(|n| n.len() < 128)
        .fold(0, |lengths, n| lengths | 1u128 << n.len());
    writers.finder = Some(super::literal::Finder::any(&names));
    Some(writers)
}

/// The `defmacro` forms of `b` (at top level or inside a form). Cheap on files without
/// one: a `memmem` pass first; only the top-level forms holding one are read.
fn defmacros(b: &[u8], reads: &dyn Fn(bool, &[u8]) -> bool) -> Vec<Learned> {
    let hits = expand::defmacro_hits(b);
    if hits.is_empty() {
        return Vec::new();
    }
    if let Some(found) = at_line_starts(b, &hits, reads) {
        return found;
    }
    let mut out = Vec::new();
    let mut reads = |plus, e: &[u8]| reads(plus, e);
    expand::each_form_holding(
        b,
        &hits,
        &mut |start, end| match top_level_defmacro(b, start, end) {
            Some(name) => out.push(Learned {
                name,
                text: b[start..end].to_vec(),
            }),
            None => {
                for form in read(b, start, end, &mut reads) {
                    collect(form, &mut out);
                }
            }
        },
    );
    out
}

/// The fast path of [`defmacros`], for a file whose every `(defmacro` (`hits`: where
/// `defmacro` is) opens a line (after a reader conditional or not), as is the custom: each form read from its `(` up to the
/// next one, without scanning the rest of the file. `None` when one is indented (inside
/// another form), or is not the first on its line (its prefix would hold the forms before
/// it, read again for each: quadratic on a line of many): the file is scanned form by form.
fn at_line_starts(
    b: &[u8],
    hits: &[usize],
    reads: &dyn Fn(bool, &[u8]) -> bool,
) -> Option<Vec<Learned>> {
    let mut opens = Vec::with_capacity(hits.len());
    let (mut line, mut scanned) = (0usize, 0usize);
    let mut previous_line: Option<usize> = None;
    for &h in hits {
        let Some(open) = h.checked_sub(1).filter(|&o| b[o] == b'(') else {
            continue;
        };
        // Nothing before it on its line, or a reader conditional (`#+sbcl (defmacro`).
        // The hits are in order: only the bytes since the last are looked at.
        if let Some(n) = memchr::memrchr(b'\n', &b[scanned.min(open)..open]) {
            line = scanned + n + 1;
        }
        scanned = open;
        if previous_line.replace(line) == Some(line) {
            return None;
        }
        // `#+sbcl (defmacro`, or `#-sbcl` alone on the line before: learned only when the
        // request's features read it; a prefix that is not one plain conditional is left
        // to the form scan.
        let prefix = if line < open {
            &b[line..open]
        } else {
            line_before(b, line)
        };
        if !prefix.is_empty() {
            let (b"#+" | b"#-") = &prefix[..prefix.len().min(2)] else {
                return None;
            };
            let expression = prefix[2..].trim_ascii();
            if expression.is_empty() || expression.iter().any(|c| matches!(c, b'#' | b';' | b'|')) {
                return None;
            }
            if !reads(prefix[1] == b'+', expression) {
                continue;
            }
        }
        opens.push(open);
    }
    let mut out = Vec::with_capacity(opens.len());
    let mut reads = |plus, e: &[u8]| reads(plus, e);
    let mut budget = Budget::new(usize::MAX);
    for (k, &open) in opens.iter().enumerate() {
        let limit = opens.get(k + 1).copied().unwrap_or(b.len());
        let Some(end) = form_end(b, open, limit, &mut reads, &mut budget) else {
            continue;
        };
        if let Some(name) = top_level_defmacro(b, open, end) {
            out.push(Learned {
                name,
                text: b[open..end].to_vec(),
            });
        }
    }
    Some(out)
}

/// The last non-blank line before the line starting at `line`, trimmed, when it is a
/// reader conditional's (`#-sbcl` alone on its line); empty otherwise.
fn line_before(b: &[u8], line: usize) -> &[u8] {
    let Some(last) = b[..line].iter().rposition(|c| !c.is_ascii_whitespace()) else {
        return &[];
    };
    let start = memchr::memrchr(b'\n', &b[..last]).map_or(0, |n| n + 1);
    let text = b[start..=last].trim_ascii();
    if text.starts_with(b"#+") || text.starts_with(b"#-") {
        text
    } else {
        &[]
    }
}

/// The name of the macro `b[start..end]` defines when it is a `(defmacro NAME ...)` (the
/// common case, told from its first two tokens without reading it).
fn top_level_defmacro(b: &[u8], start: usize, end: usize) -> Option<String> {
    let mut tokens = Vec::with_capacity(2);
    crate::scan::each_token(b, start, end, &mut |s, e| {
        tokens.push((s, e));
        if tokens.len() == 2 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    let [(s0, e0), (s1, e1)] = tokens[..] else {
        return None;
    };
    // `(defmacro` at the form's start: nothing but `(` and whitespace before it.
    let head = b[start..s0].iter().filter(|c| !c.is_ascii_whitespace());
    if head.ne(b"(".iter()) || token_name(&b[s0..e0]) != "defmacro" {
        return None;
    }
    Some(token_name(&b[s1..e1]))
}

/// The `defmacro` forms inside `form`, outside quoted data, printed back.
fn collect(form: Val, out: &mut Vec<Learned>) {
    let mut stack = vec![form];
    while let Some(v) = stack.pop() {
        if v.head() == Some("defmacro") {
            if let Some(name) = v.items().and_then(|i| i.get(1)?.symbol_name()) {
                let name = name.to_string();
                let mut text = String::new();
                print(&v, &mut text);
                out.push(Learned {
                    name,
                    text: text.into_bytes(),
                });
            }
            continue;
        }
        if let Val::List(items) = v {
            stack.extend(items.into_iter().rev());
        }
    }
}

/// What follows `defmacro` in the learned macro's text: name, lambda list, body.
fn parts(l: &Learned, reads: &dyn Fn(bool, &[u8]) -> bool) -> Vec<Val> {
    let mut reads = |p, e: &[u8]| reads(p, e);
    match read(&l.text, 0, l.text.len(), &mut reads)
        .into_iter()
        .next()
    {
        Some(Val::List(mut items)) if items.len() > 1 => items.split_off(1),
        _ => Vec::new(),
    }
}

/// The calls the templates of learned macros write ([`template_calls`]), by the macro's
/// index among the learned ones: the writers are looked for twice, before and after the
/// macros that definers make are added at the end of the list, and each macro read once
/// for both (about 13 M instructions of `--callers node` in SBCL's sources).
pub(super) type TemplateCalls = HashMap<usize, Vec<(String, bool)>>;

/// The macros among `learned` whose templates write a call of `query`'s symbol, or a
/// call of a macro that does ([`MAX_MACRO_DEPTH`] deep). Level by level: only the macros
/// whose text holds a name of the level before are read, each once (`calls`: those read
/// before, by index in `learned`, which only grows at its end between two calls).
fn writers_of(
    learned: &[Learned],
    query: &SymbolQuery,
    reads: &dyn Fn(bool, &[u8]) -> bool,
    calls: &mut TemplateCalls,
) -> Writers {
    let mut writes: HashSet<String> = HashSet::new();
    let mut level = vec![query.name.clone()];
    for _ in 0..MAX_MACRO_DEPTH {
        let finder = super::literal::Finder::any(&level);
        let mut added = Vec::new();
        for (k, l) in learned.iter().enumerate() {
            if writes.contains(&l.name) || !finder.is_match(&l.text) {
                continue;
            }
            let made = calls
                .entry(k)
                .or_insert_with(|| template_calls(parts(l, reads).get(2..).unwrap_or_default()));
            let direct = |(n, setf): &(String, bool)| *n == query.name && *setf == query.setf;
            let through = |(n, setf): &(String, bool)| !*setf && writes.contains(n);
            if made.iter().any(|c| direct(c) || through(c)) {
                added.push(l.name.clone());
            }
        }
        if added.is_empty() {
            break;
        }
        writes.extend(added.iter().cloned());
        level = added;
    }
    let mut macros = Vec::new();
    for l in learned.iter().filter(|l| writes.contains(&l.name)) {
        macros.extend(expand::macro_of(&parts(l, reads)));
    }
    let mut writers = Writers {
        names: writes,
        ..Writers::default()
    };
    writers.macros.extend(macros);
    writers
}

/// The calls (folded name, `setf`) that the backquote templates of `body` write, what
/// their commas compute left out (unknown).
fn template_calls(body: &[Val]) -> Vec<(String, bool)> {
    let mut text = String::new();
    let mut stack: Vec<&Val> = body.iter().collect();
    while let Some(v) = stack.pop() {
        match v {
            Val::Backquote(t) => {
                print(&blank_commas(t, &mut stack), &mut text);
                text.push('\n');
            }
            Val::List(items) => stack.extend(items),
            Val::Dotted(items, tail) => {
                stack.extend(items);
                stack.push(tail);
            }
            Val::Quote(x) | Val::Comma(x) | Val::Splice(x) | Val::Function(x) => stack.push(x),
            _ => {}
        }
    }
    let b = text.as_bytes();
    calls_in(b, 0, b.len(), &mut |_, _| true, &|_| true)
        .into_iter()
        .map(|c| (token_name(&b[c.start..c.end]), c.setf))
        .collect()
}

/// The template `t` with what its commas compute unknown; the commas' expressions go to
/// `nested` (a template inside one writes code too). Recursion as deep as the datum.
fn blank_commas<'v>(t: &'v Val, nested: &mut Vec<&'v Val>) -> Val {
    match t {
        // A quoted constant (`,'name`, what a nested template's `,',name` becomes).
        Val::Comma(x) if matches!(**x, Val::Quote(_)) => match &**x {
            Val::Quote(q) => (**q).clone(),
            _ => Val::Unknown,
        },
        Val::Comma(x) | Val::Splice(x) => {
            nested.push(x);
            Val::Unknown
        }
        Val::List(items) => Val::List(items.iter().map(|i| blank_commas(i, nested)).collect()),
        Val::Dotted(items, tail) => Val::Dotted(
            items.iter().map(|i| blank_commas(i, nested)).collect(),
            Box::new(blank_commas(tail, nested)),
        ),
        Val::Quote(x) => Val::Quote(Box::new(blank_commas(x, nested))),
        Val::Function(x) => Val::Function(Box::new(blank_commas(x, nested))),
        // A nested template is read as it stands (its commas are the outer one's).
        other => other.clone(),
    }
}

/// The calls of the searched symbol that the macros of `search.through` write in
/// `b[start..end]`: each at the macro call's operator, with the macro's folded name.
/// `sites`: the calls of those macros ([`Writers::is_writer`]) found by the same walk as
/// `direct`, the calls the form spells; a macro call holding one of these is the
/// ordinary case, not a call through the macro.
#[allow(clippy::too_many_arguments)]
pub(crate) fn calls_through(
    b: &[u8],
    start: usize,
    end: usize,
    search: &Search,
    query: &SymbolQuery,
    direct: &[Call],
    sites: Vec<Call>,
    budget: &mut Budget,
) -> Vec<(Call, String)> {
    let writers = &search.through;
    let mut reads = |p, e: &[u8]| search.reads(p, e);
    if sites.is_empty() {
        return Vec::new();
    }
    let templates = template_spans(b, start, end, &mut reads);
    let mut in_template = templates.iter().peekable();
    let mut out = Vec::new();
    for site in sites {
        // A macro call a template writes is the written code's, not this form's.
        while in_template.next_if(|t| t.1 <= site.start).is_some() {}
        if in_template.peek().is_some_and(|t| t.0 < site.start) {
            continue;
        }
        let Some(open) = open_paren(b, start, site.start).filter(|_| !site.setf) else {
            continue;
        };
        let Some(close) = form_end(b, open, end, &mut reads, budget) else {
            break;
        };
        // `direct` is in text order: the first call after `open` tells (a scan of all
        // of them per site was quadratic in a form of many writer calls).
        let after = direct.partition_point(|c| c.start <= open);
        if direct.get(after).is_some_and(|c| c.start < close) {
            continue;
        }
        let Some(call) = read(b, open, close, &mut reads).into_iter().next() else {
            continue;
        };
        let name = token_name(&b[site.start..site.end]);
        let strict = writers.strict.contains(&name);
        if writes(&name, &call, writers, query, budget, 0, strict) {
            out.push((site, name));
        }
    }
    out
}

/// The outermost backquoted lists of `b[start..end]`, `[open, close)`, in order.
fn template_spans(
    b: &[u8],
    start: usize,
    end: usize,
    reads: &mut dyn FnMut(bool, &[u8]) -> bool,
) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut depth = 0usize;
    // The depth of the open template's list, and where it opened.
    let mut open: Option<(usize, usize)> = None;
    let mut backquote = false;
    each_event_read(b, start, end, reads, &mut |event| {
        match event {
            Event::Prefix(crate::scan::Prefix::Backquote, _) => {
                backquote = true;
                return ControlFlow::Continue(());
            }
            Event::Prefix(..) => return ControlFlow::Continue(()),
            Event::Open(at) => {
                depth += 1;
                if backquote && open.is_none() {
                    open = Some((depth, at));
                }
            }
            Event::Close(at) => {
                if let Some((_, from)) = open.filter(|(d, _)| *d == depth) {
                    spans.push((from, at + 1));
                    open = None;
                }
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
        backquote = false;
        ControlFlow::Continue(())
    });
    spans
}

/// The `(` that opens the list whose operator starts at `operator` (whitespace between).
fn open_paren(b: &[u8], floor: usize, operator: usize) -> Option<usize> {
    let mut i = operator;
    while i > floor {
        i -= 1;
        match b[i] {
            b'(' => return Some(i),
            c if c.is_ascii_whitespace() => {}
            _ => return None,
        }
    }
    None
}

/// The end of the list opened at `open` (within `end`), its length taken from `budget`;
/// `None` when unclosed or the budget is spent.
fn form_end(
    b: &[u8],
    open: usize,
    end: usize,
    reads: &mut dyn FnMut(bool, &[u8]) -> bool,
    budget: &mut Budget,
) -> Option<usize> {
    let mut depth = 0usize;
    let mut close = None;
    each_event_read(b, open, end, reads, &mut |event| {
        match event {
            Event::Open(_) => depth += 1,
            Event::Close(at) => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    close = Some(at + 1);
                    return ControlFlow::Break(());
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    });
    let close = close?;
    budget.spend(close - open)?;
    Some(close)
}

/// Whether the call `call` of the writer macro `name` writes a call of the symbol: its
/// expansion does, or (not instantiable) its templates do.
#[allow(clippy::too_many_arguments)]
fn writes(
    name: &str,
    call: &Val,
    writers: &Writers,
    query: &SymbolQuery,
    budget: &mut Budget,
    depth: usize,
    strict: bool,
) -> bool {
    // A strict writer's call (or one its expansion writes) is taken at its
    // expansion's word only.
    let strict = strict || writers.strict.contains(name);
    let table = if strict {
        &writers.strict_macros
    } else {
        &writers.macros
    };
    let Some(m) = table.get(name) else {
        return !strict;
    };
    if budget.spend(call.size()).is_none() {
        return false;
    }
    let call = blank_writer_calls(call, writers);
    let lookup = Lookup {
        global: table,
        locals: &[],
    };
    match expand::expand_charged(m, &call, &lookup, budget) {
        Some(expansion) => expansion_calls(&expansion, writers, query, budget, depth, strict),
        None => !strict,
    }
}

/// The name that stands for a writer macro's name in a call's arguments: no source text
/// spells it, and it is not unknown (an unknown in an expansion may hide a call).
const ELSEWHERE: &str = "\u{2}";

/// `call` with the operators of the writer macros' calls in its arguments replaced: those
/// calls are found where they are written, not again in this one's expansion.
fn blank_writer_calls(call: &Val, writers: &Writers) -> Val {
    let Val::List(items) = call else {
        return call.clone();
    };
    let mut out = Vec::with_capacity(items.len());
    out.extend(items.first().cloned());
    out.extend(items.iter().skip(1).map(|i| blank_heads(i, writers)));
    Val::List(out)
}

/// `v` with every list headed by a writer macro's name headed by [`ELSEWHERE`] instead.
/// Recursion as deep as the datum.
fn blank_heads(v: &Val, writers: &Writers) -> Val {
    match v {
        Val::List(items) => Val::List(
            items
                .iter()
                .enumerate()
                .map(|(k, i)| match i.symbol_name() {
                    Some(n) if k == 0 && writers.names.contains(n) => Val::sym(ELSEWHERE),
                    _ => blank_heads(i, writers),
                })
                .collect(),
        ),
        Val::Dotted(items, tail) => Val::Dotted(
            items.iter().map(|i| blank_heads(i, writers)).collect(),
            Box::new(blank_heads(tail, writers)),
        ),
        Val::Backquote(x) => Val::Backquote(Box::new(blank_heads(x, writers))),
        Val::Comma(x) => Val::Comma(Box::new(blank_heads(x, writers))),
        Val::Splice(x) => Val::Splice(Box::new(blank_heads(x, writers))),
        other => other.clone(),
    }
}

/// Whether `expansion`, read as code, calls the symbol, or calls a writer macro whose
/// call does, or holds what the instantiation could not compute (`depth`: macros
/// expanded to get here).
fn expansion_calls(
    expansion: &Val,
    writers: &Writers,
    query: &SymbolQuery,
    budget: &mut Budget,
    depth: usize,
    strict: bool,
) -> bool {
    let mut text = String::new();
    print(expansion, &mut text);
    if budget.spend(text.len()).is_none() {
        return false;
    }
    let b = text.as_bytes();
    let deeper = depth + 1 < MAX_MACRO_DEPTH;
    let wanted =
        |t: &[u8]| query.matches_token(t) || (deeper && writers.names.contains(&token_name(t)));
    let found = calls_in(b, 0, b.len(), &mut |_, _| true, &wanted);
    let symbol = |c: &Call| c.setf == query.setf && query.matches_token(&b[c.start..c.end]);
    if found.iter().any(symbol) {
        return true;
    }
    let mut reads = |_, _: &[u8]| true;
    for c in found.iter().filter(|c| !c.setf) {
        let name = token_name(&b[c.start..c.end]);
        if !writers.names.contains(&name) {
            continue;
        }
        let Some(open) = open_paren(b, 0, c.start) else {
            continue;
        };
        let Some(close) = form_end(b, open, b.len(), &mut reads, budget) else {
            return false;
        };
        let Some(call) = read(b, open, close, &mut reads).into_iter().next() else {
            continue;
        };
        if writes(&name, &call, writers, query, budget, depth + 1, strict) {
            return true;
        }
    }
    // What the macro computes beyond the pure builders is unknown, and may be the call its
    // templates write (`(let ,bindings ,@writers)`): the templates' word is taken.
    !strict && text.contains(UNKNOWN)
}

mod computed;
mod made;
#[cfg(test)]
mod tests;
