//! Macros that the project's own macros define (docs/find.md#calls-through-the-projects-macros):
//! clx's `(define-accessor card16 (16) ((index) `(read-card16 ,index)) ...)` writes
//! `(defmacro card16-get (index) `(read-card16 ,index))`, consfigurator's
//! `(define-property-defining-macro defprop ...)` writes the `defprop` its properties are
//! defined with. A call of a made macro calls what its template writes, as a call of a
//! `defmacro` the source spells does.
//!
//! A learned macro whose text holds a `defmacro` of its own is a *definer*; each call of
//! one in the scope is instantiated ([`crate::model::expand`], with the project functions
//! it calls to build names, `getify` and `xintern` in clx), and the `defmacro`s of the
//! expansion are learned like those of the source. A second pass over the scope's files,
//! only when a definer exists; only the files holding a definer's name are read, and a
//! file's instantiations share its step budget ([`Budget::for_file`]).

use super::{collect, Files, Learned, TemplateCalls};
use crate::find::literal::{Finder, Haystack};
use crate::find::{Search, Target};
use crate::model::expand::datum::{read, Val};
use crate::model::expand::{self, functions, Budget, Lookup, Macros};
use std::collections::HashSet;

/// A pass over the scope's files learning the wanted functions.
type FunctionsPass<'a> = dyn Fn(&HashSet<String>) -> Vec<(String, expand::Function)> + 'a;

/// The macros of the scope whose calls define macros, and where their names may be.
struct Definers {
    macros: Macros,
    finder: Finder,
    /// The searched name and the names of the macros whose templates write its call: a
    /// made macro can write the call only if its definer's text or its call holds one.
    wanted: Finder,
    /// The definers whose text holds one of those: every call of them is instantiated.
    holding: HashSet<String>,
}

/// What a template's computed operator starts with (`(,(putify type) ...)`).
const COMPUTED: &[u8] = b"(,(";

/// The macros the definers among `learned` define in `files`, learned.
pub(super) fn learn(
    files: &Files,
    search: &Search,
    learned: &[Learned],
    template_calls: &mut TemplateCalls,
) -> Vec<Learned> {
    let reads = |plus, e: &[u8]| search.reads(plus, e);
    let Some(mut definers) = definers(learned, search, &reads, template_calls) else {
        return Vec::new();
    };
    let mut calls = files.map(search, |b| calls_in(b, &definers, &reads));
    calls.retain(|c| !c.1.is_empty());
    if calls.is_empty() {
        return Vec::new();
    }
    let called: HashSet<&str> = calls
        .iter()
        .flat_map(|c| c.1.iter().map(|(n, _)| n.as_str()))
        .collect();
    learn_functions(&mut definers, &called, &|wanted| {
        files.flat_map(search, |b| functions::learn(b, wanted, &reads))
    });
    calls
        .into_iter()
        .flat_map(|(size, calls)| made_by(size, calls, &definers))
        .collect()
}

/// The learned macros whose text writes a `defmacro` besides its own, or a call of such
/// a macro (lparallel's `defslots` writing `%defslots` writing `define-with-slots-macro`;
/// 8 deep), that can be instantiated; `None` when there is none.
fn definers(
    learned: &[Learned],
    search: &Search,
    reads: &dyn Fn(bool, &[u8]) -> bool,
    template_calls: &mut TemplateCalls,
) -> Option<Definers> {
    let Target::Callers(query) = &search.target else {
        return None;
    };
    // The macros whose templates write a `defmacro` (their text holds a second one), or
    // a call of such a macro, level by level (8 deep): only the macros whose text holds
    // a name of the level before are read.
    let mut found = vec![false; learned.len()];
    // The level's names, as a set: a template's calls are looked up, not compared with
    // each name (thousands of definers, thousands of calls).
    let mut level: HashSet<String> = HashSet::new();
    let mut finder: Option<Finder> = None;
    for _ in 0..expand::MAX_MACRO_DEPTH {
        let mut added = Vec::new();
        for (k, l) in learned.iter().enumerate() {
            let candidate = match &finder {
                None => expand::defmacro_hits(&l.text).len() >= 2,
                Some(f) => f.is_match(&l.text),
            };
            if found[k] || !candidate {
                continue;
            }
            let body = super::parts(l, reads);
            let writes = |n: &str| match &finder {
                None => n == "defmacro",
                Some(_) => level.contains(n),
            };
            if super::template_calls(body.get(2..).unwrap_or_default())
                .iter()
                .any(|(n, setf)| !setf && writes(n))
            {
                added.push(k);
            }
        }
        if added.is_empty() {
            break;
        }
        let names: Vec<String> = added.iter().map(|&k| learned[k].name.clone()).collect();
        for k in added {
            found[k] = true;
        }
        finder = Some(Finder::any(&names));
        level = names.into_iter().collect();
    }
    let mut wanted: Vec<String> = super::writers_of(learned, query, reads, template_calls)
        .names()
        .map(str::to_string)
        .collect();
    wanted.push(query.name.clone());
    let wanted = Finder::any(&wanted);
    let mut macros = Vec::new();
    let mut holding = HashSet::new();
    for (l, _) in learned.iter().zip(&found).filter(|(_, f)| **f) {
        if wanted.is_match(&l.text) {
            holding.insert(l.name.clone());
        }
        macros.extend(expand::macro_of(&super::parts(l, reads)));
    }
    if macros.is_empty() {
        return None;
    }
    let names: Vec<String> = macros.iter().map(|(n, _)| n.clone()).collect();
    let mut table = Macros::default();
    table.extend(macros);
    Some(Definers {
        macros: table,
        finder: Finder::any(&names),
        wanted,
        holding,
    })
}

/// Learns the project functions the definers call to build names, and those these call
/// ([`functions::MAX_ROUNDS`] rounds); `pass`: the wanted functions of the scope's files.
fn learn_functions(definers: &mut Definers, called: &HashSet<&str>, pass: &FunctionsPass) {
    let mut tried = HashSet::new();
    // Those of the definers called in the scope only.
    let mut wanted: HashSet<String> = called
        .iter()
        .filter_map(|n| definers.macros.get(n))
        .flat_map(|m| functions::called(&m.body))
        .filter(|n| functions::may_be_project(n) && definers.macros.get(n).is_none())
        .collect();
    for _ in 0..functions::MAX_ROUNDS {
        wanted.retain(|n| !tried.contains(n));
        if wanted.is_empty() {
            break;
        }
        tried.extend(wanted.iter().cloned());
        wanted = definers.macros.add_functions(pass(&wanted));
    }
}

/// The calls of the definers in `b` that may make a macro writing the call (their text
/// or their definer's holds a wanted name), with `b`'s size (its step budget).
fn calls_in(
    b: &[u8],
    definers: &Definers,
    reads: &dyn Fn(bool, &[u8]) -> bool,
) -> (usize, Vec<(String, Val)>) {
    let hay = Haystack::new(b);
    let mut calls = Vec::new();
    // A file holding no wanted name calls no definer that matters but a holding one,
    // or one whose call writes an operator the made macro computes.
    let computing = |text: &[u8]| memchr::memmem::find(text, COMPUTED).is_some();
    if definers.holding.is_empty() && !definers.wanted.is_in(&hay) && !computing(b) {
        return (b.len(), calls);
    }
    // Calls only: a definer's name right after `(`.
    let mut hits = definers.finder.starts(&hay);
    hits.retain(|&h| h > 0 && b[h - 1] == b'(');
    if hits.is_empty() {
        return (b.len(), calls);
    }
    let mut reads = |plus, e: &[u8]| reads(plus, e);
    expand::each_form_holding(b, &hits, &mut |start, end| {
        // A made macro computing an operator may write any name holding a piece of it
        // (`through/computed.rs`): its call is instantiated too.
        let holds = definers.wanted.is_match(&b[start..end]) || computing(&b[start..end]);
        if !holds && definers.holding.is_empty() {
            return;
        }
        let mut here = Vec::new();
        for form in read(b, start, end, &mut reads) {
            calls_of(form, &definers.macros, &mut here);
        }
        calls.extend(
            here.into_iter()
                .filter(|(name, _)| holds || definers.holding.contains(name)),
        );
    });
    (b.len(), calls)
}

/// The `defmacro`s that `calls` (of a file of `size` bytes) write.
fn made_by(size: usize, calls: Vec<(String, Val)>, definers: &Definers) -> Vec<Learned> {
    let mut out = Vec::new();
    let mut budget = Budget::for_file(size);
    let lookup = Lookup {
        global: &definers.macros,
        locals: &[],
    };
    for (name, call) in calls {
        let Some(m) = definers.macros.get(&name) else {
            continue;
        };
        if let Some(expansion) = expand::expand_charged(m, &call, &lookup, &mut budget) {
            collect(expansion, &mut out);
        }
    }
    out
}

/// The calls of the definers in `form` (not inside quoted data or a template), with the
/// definer's name.
fn calls_of(form: Val, definers: &Macros, out: &mut Vec<(String, Val)>) {
    let mut stack = vec![form];
    while let Some(v) = stack.pop() {
        let Val::List(items) = v else { continue };
        if let Some(name) = items.first().and_then(Val::symbol_name) {
            if definers.get(name).is_some() {
                let name = name.to_string();
                out.push((name, Val::List(items)));
                continue;
            }
        }
        stack.extend(items.into_iter().rev());
    }
}
