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

use super::{collect, Learned};
use crate::cancel::CancelToken;
use crate::find::literal::{Finder, Haystack};
use crate::find::{ScopePart, Search};
use crate::guard::{Guard, LoadedFile};
use crate::model::expand::datum::{read, Val};
use crate::model::expand::{self, functions, Budget, Lookup, Macros};
use std::collections::HashSet;

/// The macros of the scope whose calls define macros, and where their names may be.
struct Definers {
    macros: Macros,
    finder: Finder,
}

/// The macros the definers among `learned` define in the files of `parts`, learned.
pub(super) fn learn(
    guard: &Guard,
    parts: &[ScopePart],
    search: &Search,
    cancel: &CancelToken,
    learned: &[Learned],
) -> Vec<Learned> {
    let reads = |plus, e: &[u8]| search.reads(plus, e);
    let Some(mut definers) = definers(learned, &reads) else {
        return Vec::new();
    };
    let each = |work: &(dyn Fn(&LoadedFile) -> Vec<Learned> + Sync)| {
        let mut out = Vec::new();
        for part in parts {
            match part {
                ScopePart::Single(file) => out.extend(work(file)),
                ScopePart::Walked(files) => {
                    for found in search
                        .map_files(guard, files, cancel, work)
                        .into_iter()
                        .flatten()
                    {
                        out.extend(found);
                    }
                }
            }
        }
        out
    };
    learn_functions(&mut definers, &|wanted| {
        let mut found = Vec::new();
        let work = |file: &LoadedFile| functions::learn(&file.bytes, wanted, &reads);
        for part in parts {
            match part {
                ScopePart::Single(file) => found.extend(work(file)),
                ScopePart::Walked(files) => {
                    for f in search
                        .map_files(guard, files, cancel, work)
                        .into_iter()
                        .flatten()
                    {
                        found.extend(f);
                    }
                }
            }
        }
        found
    });
    each(&|file: &LoadedFile| made_in(&file.bytes, &definers, &reads))
}

/// [`learn`] over files already in memory.
pub(super) fn learn_in_memory(
    files: &[(&str, &[u8])],
    search: &Search,
    learned: &[Learned],
) -> Vec<Learned> {
    let reads = |plus, e: &[u8]| search.reads(plus, e);
    let Some(mut definers) = definers(learned, &reads) else {
        return Vec::new();
    };
    learn_functions(&mut definers, &|wanted| {
        files
            .iter()
            .flat_map(|(_, b)| functions::learn(b, wanted, &reads))
            .collect()
    });
    files
        .iter()
        .flat_map(|(_, b)| made_in(b, &definers, &reads))
        .collect()
}

/// The learned macros whose text writes a `defmacro` besides its own, that can be
/// instantiated; `None` when there is none.
fn definers(learned: &[Learned], reads: &dyn Fn(bool, &[u8]) -> bool) -> Option<Definers> {
    let mut macros = Vec::new();
    for l in learned {
        if expand::defmacro_hits(&l.text).len() < 2 {
            continue;
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
    })
}

/// Learns the project functions the definers call to build names, and those these call
/// ([`functions::MAX_ROUNDS`] rounds); `pass`: the wanted functions of the scope's files.
fn learn_functions(
    definers: &mut Definers,
    pass: &dyn Fn(&HashSet<String>) -> Vec<(String, expand::Function)>,
) {
    let mut tried = HashSet::new();
    let mut wanted = definers.macros.wanted_functions();
    for _ in 0..functions::MAX_ROUNDS {
        wanted.retain(|n| !tried.contains(n));
        if wanted.is_empty() {
            break;
        }
        tried.extend(wanted.iter().cloned());
        wanted = definers.macros.add_functions(pass(&wanted));
    }
}

/// The `defmacro`s that the calls of the definers in `b` write.
fn made_in(b: &[u8], definers: &Definers, reads: &dyn Fn(bool, &[u8]) -> bool) -> Vec<Learned> {
    let hay = Haystack::new(b);
    let hits = definers.finder.starts(&hay);
    let mut out = Vec::new();
    if hits.is_empty() {
        return out;
    }
    let mut budget = Budget::for_file(b.len());
    let lookup = Lookup {
        global: &definers.macros,
        locals: &[],
    };
    let mut reads = |plus, e: &[u8]| reads(plus, e);
    let mut calls = Vec::new();
    expand::each_form_holding(b, &hits, &mut |start, end| {
        for form in read(b, start, end, &mut reads) {
            calls_of(form, &definers.macros, &mut calls);
        }
    });
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
