//! Calls that the project's own macros write into their callers
//! (docs/find.md#calls-through-the-projects-macros): `(with-aggregate/object (s) ...)`
//! calls `write-delimiter` when the macro's template does. A callers search learns the
//! scope's `defmacro`s first ([`learn`]); a call of one whose expansion calls the symbol
//! is a call of it *through* that macro, at the macro call.
//!
//! Prefilter: only a macro whose definition mentions the symbol (or a macro that does,
//! [`MAX_MACRO_DEPTH`] deep) and whose templates write a call of it ([`writers_of`]) can
//! write one; only the forms that call such a macro are instantiated.
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

/// A `defmacro` of the scope as first read.
struct Learned {
    name: String,
    /// The folded names of the symbols its definition mentions, each once.
    mentions: Vec<String>,
    /// What follows `defmacro`: name, lambda list, body.
    parts: Vec<Val>,
}

/// The macros of the scope whose expansions may call the searched symbol.
#[derive(Default)]
pub(crate) struct Writers {
    /// Their folded names.
    names: HashSet<String>,
    /// Those that can be instantiated.
    macros: Macros,
}

/// Whether the search is one that calls through macros serve.
pub(crate) fn wanted(search: &Search) -> bool {
    matches!(search.target, Target::Callers(_))
}

/// Learns the macros of `parts` that may write a call of the searched symbol into
/// `search.through`, and widens the prefilter with their names.
pub(crate) fn learn(guard: &Guard, parts: &[ScopePart], search: &mut Search, cancel: &CancelToken) {
    if !wanted(search) {
        return;
    }
    let mut learned = Vec::new();
    {
        let reads = |plus, e: &[u8]| search.reads(plus, e);
        let work = |file: &LoadedFile| defmacros(&file.bytes, &reads);
        for part in parts {
            match part {
                ScopePart::Single(file) => learned.extend(work(file)),
                ScopePart::Walked(files) => {
                    for found in crate::project::map_files(guard, files, cancel, work)
                        .into_iter()
                        .flatten()
                    {
                        learned.extend(found);
                    }
                }
            }
        }
    }
    adopt(learned, search);
}

/// [`learn`] over files already in memory.
pub(crate) fn learn_in_memory(files: &[(&str, &[u8])], search: &mut Search) {
    if !wanted(search) {
        return;
    }
    let mut learned = Vec::new();
    {
        let reads = |plus, e: &[u8]| search.reads(plus, e);
        for (_, bytes) in files {
            learned.extend(defmacros(bytes, &reads));
        }
    }
    adopt(learned, search);
}

/// Keeps the writers among `learned` in `search`, its prefilter widened with their names.
fn adopt(learned: Vec<Learned>, search: &mut Search) {
    let Target::Callers(query) = &search.target else {
        return;
    };
    let writers = writers_of(learned, query);
    if writers.names.is_empty() {
        return;
    }
    let mut literals = vec![query.name.clone()];
    literals.extend(writers.names.iter().cloned());
    search.prefilter = Some(super::literals_finder(&literals));
    search.through = writers;
}

/// The `defmacro` forms of `b` (at top level or inside a form). Cheap on files without
/// one: a `memmem` pass first; only the top-level forms holding one are read.
fn defmacros(b: &[u8], reads: &dyn Fn(bool, &[u8]) -> bool) -> Vec<Learned> {
    let mut hits: Vec<usize> = memchr::memmem::find_iter(b, b"defmacro")
        .chain(memchr::memmem::find_iter(b, b"DEFMACRO"))
        .collect();
    if hits.is_empty() {
        return Vec::new();
    }
    hits.sort_unstable();
    let mut out = Vec::new();
    let mut next = 0usize;
    let mut reads = |plus, e: &[u8]| reads(plus, e);
    crate::scan::scan_each(b, &mut |item| {
        while next < hits.len() && hits[next] < item.span.start {
            next += 1;
        }
        let Some(&h) = hits.get(next) else {
            return ControlFlow::Break(());
        };
        if h < item.span.end && item.kind == crate::scan::ItemKind::Form && item.core_is_list {
            for form in read(b, item.span.start, item.span.end, &mut reads) {
                collect(form, &mut out);
            }
        }
        ControlFlow::Continue(())
    });
    out
}

/// The `defmacro` forms inside `form`, outside quoted data.
fn collect(form: Val, out: &mut Vec<Learned>) {
    let mut stack = vec![form];
    while let Some(v) = stack.pop() {
        let Val::List(mut items) = v else { continue };
        if items.first().is_some_and(|h| h.is_symbol("defmacro")) {
            let Some(name) = items.get(1).and_then(Val::symbol_name).map(str::to_string) else {
                continue;
            };
            let parts = items.split_off(1);
            let mut mentions = Vec::new();
            for p in &parts {
                symbols(p, &mut mentions);
            }
            mentions.sort_unstable();
            mentions.dedup();
            out.push(Learned {
                name,
                mentions,
                parts,
            });
            continue;
        }
        stack.extend(items.into_iter().rev());
    }
}

/// Adds the names of the symbols of `v` to `out`.
fn symbols(v: &Val, out: &mut Vec<String>) {
    let mut stack = vec![v];
    while let Some(n) = stack.pop() {
        match n {
            Val::Sym(w) => out.push(w.name.clone()),
            Val::List(items) => stack.extend(items),
            Val::Dotted(items, tail) => {
                stack.extend(items);
                stack.push(tail);
            }
            Val::Quote(x)
            | Val::Backquote(x)
            | Val::Comma(x)
            | Val::Splice(x)
            | Val::Function(x) => stack.push(x),
            _ => {}
        }
    }
}

/// The macros among `learned` whose templates write a call of `query`'s symbol, or a
/// call of a macro that does ([`MAX_MACRO_DEPTH`] deep).
fn writers_of(learned: Vec<Learned>, query: &SymbolQuery) -> Writers {
    let relevant = mentioning(&learned, &query.name);
    let names: HashSet<&str> = relevant.iter().map(|&k| learned[k].name.as_str()).collect();
    // What each relevant macro's templates call, among the symbol and those macros.
    let calls: Vec<Vec<(String, bool)>> = relevant
        .iter()
        .map(|&k| {
            template_calls(learned[k].parts.get(2..).unwrap_or_default(), &|n| {
                n == query.name || names.contains(n)
            })
        })
        .collect();
    let mut writes: HashSet<&str> = HashSet::new();
    for _ in 0..MAX_MACRO_DEPTH {
        let before = writes.len();
        for (j, &k) in relevant.iter().enumerate() {
            let direct = |(n, setf): &(String, bool)| *n == query.name && *setf == query.setf;
            let through = |(n, setf): &(String, bool)| !*setf && writes.contains(n.as_str());
            if calls[j].iter().any(|c| direct(c) || through(c)) {
                writes.insert(learned[k].name.as_str());
            }
        }
        if writes.len() == before {
            break;
        }
    }
    let mut macros = Vec::new();
    for &k in &relevant {
        if writes.contains(learned[k].name.as_str()) {
            macros.extend(expand::macro_of(&learned[k].parts));
        }
    }
    let mut writers = Writers {
        names: writes.into_iter().map(str::to_string).collect(),
        macros: Macros::default(),
    };
    writers.macros.extend(macros);
    writers
}

/// The indices of the macros that mention `name`, or mention a macro that does,
/// [`MAX_MACRO_DEPTH`] steps at most.
fn mentioning(learned: &[Learned], name: &str) -> Vec<usize> {
    let mut mentioned_by: HashMap<&str, Vec<usize>> = HashMap::new();
    for (k, l) in learned.iter().enumerate() {
        for n in &l.mentions {
            mentioned_by.entry(n.as_str()).or_default().push(k);
        }
    }
    let mut relevant = vec![false; learned.len()];
    let mut frontier = vec![name];
    for _ in 0..MAX_MACRO_DEPTH {
        let mut next = Vec::new();
        for n in frontier {
            for &k in mentioned_by.get(n).map(Vec::as_slice).unwrap_or_default() {
                if !relevant[k] {
                    relevant[k] = true;
                    next.push(learned[k].name.as_str());
                }
            }
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    (0..learned.len()).filter(|&k| relevant[k]).collect()
}

/// The calls (folded name, `setf`) that the backquote templates of `body` write, what
/// their commas compute left out (unknown), for the names `wanted` accepts.
fn template_calls(body: &[Val], wanted: &dyn Fn(&str) -> bool) -> Vec<(String, bool)> {
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
    let wanted_token = |t: &[u8]| wanted(&token_name(t));
    calls_in(b, 0, b.len(), &mut |_, _| true, &wanted_token)
        .into_iter()
        .map(|c| (token_name(&b[c.start..c.end]), c.setf))
        .collect()
}

/// The template `t` with what its commas compute unknown; the commas' expressions go to
/// `nested` (a template inside one writes code too). Recursion as deep as the datum.
fn blank_commas<'v>(t: &'v Val, nested: &mut Vec<&'v Val>) -> Val {
    match t {
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
/// `direct`: the calls the form spells; a macro call holding one is the ordinary case,
/// not a call through the macro.
pub(crate) fn calls_through(
    b: &[u8],
    start: usize,
    end: usize,
    search: &Search,
    query: &SymbolQuery,
    direct: &[Call],
    budget: &mut Budget,
) -> Vec<(Call, String)> {
    let writers = &search.through;
    if writers.names.is_empty() {
        return Vec::new();
    }
    let mut reads = |p, e: &[u8]| search.reads(p, e);
    let is_writer = |t: &[u8]| writers.names.contains(&token_name(t));
    let sites = calls_in(b, start, end, &mut reads, &is_writer);
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
        if direct.iter().any(|c| open < c.start && c.start < close) {
            continue;
        }
        let Some(call) = read(b, open, close, &mut reads).into_iter().next() else {
            continue;
        };
        let name = token_name(&b[site.start..site.end]);
        if writes(&name, &call, writers, query, budget, 0) {
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
fn writes(
    name: &str,
    call: &Val,
    writers: &Writers,
    query: &SymbolQuery,
    budget: &mut Budget,
    depth: usize,
) -> bool {
    let Some(m) = writers.macros.get(name) else {
        return true;
    };
    if budget.spend(call.size()).is_none() {
        return false;
    }
    let call = blank_writer_calls(call, writers);
    let lookup = Lookup {
        global: &writers.macros,
        locals: &[],
    };
    let mut part = budget.part();
    let expansion = expand::expand(m, &call, &lookup, &mut part);
    budget.charge(&part);
    match expansion {
        Some(expansion) => expansion_calls(&expansion, writers, query, budget, depth),
        None => true,
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
        if writes(&name, &call, writers, query, budget, depth + 1) {
            return true;
        }
    }
    // What the macro computes beyond the pure builders is unknown, and may be the call its
    // templates write (`(let ,bindings ,@writers)`): the templates' word is taken.
    text.contains(UNKNOWN)
}

#[cfg(test)]
mod tests;
