//! The package of every definition and use (docs/find.md#packages).
//!
//! Each file searched also gives its package forms (`model::packages`, two `memmem` passes
//! and, where they are, a scan up to the last): its `defpackage`s for the scope's table,
//! its `in-package`s for the current package of each entry found in it. Once every file
//! is searched, the table is made and each entry's symbol resolved
//! (`model::resolve`): a definition's name, each use's token. A name or symbol asked with
//! a package (`cl-ppcre:scan`) keeps the entries whose symbol may be that one; a
//! reference whose uses are symbols of two packages becomes one entry per package; a
//! search by `name` or `symbol` groups its entries by package (the order of each
//! package's first entry), a `name_pattern` keeps file order.

use super::render::Gathered;
use super::{Caller, Definition, FileAnswer, Reference, Search, Target};
use crate::grammar::symbol_key;
use crate::guard::LoadedFile;
use crate::model::packages::{read_file, PackageDef};
use crate::model::resolve::{PackageTable, Resolved};
use crate::model::symbols::{of_name, Prefix, Written};
use std::collections::HashMap;

/// Reads the package forms of `file` and gives each entry of `answer` its current package.
pub(crate) fn of_file(file: &LoadedFile, search: &Search, answer: &mut FileAnswer) {
    // The current package is wanted up to the last entry found (its last site).
    let last_definition = answer.definitions.iter().map(|d| d.site.at).max();
    let last_include = answer
        .structures
        .iter()
        .filter_map(|s| s.include_entry.as_ref().map(|d| d.site.at))
        .max();
    let last_use = answer
        .references
        .iter()
        .flat_map(|r| r.uses.iter())
        .chain(answer.callers.iter().flat_map(|c| c.calls.iter()))
        .map(|u| u.site.at)
        .max();
    let found = [last_definition, last_include, last_use]
        .into_iter()
        .flatten()
        .max();
    let before = found.map_or(0, |at| at + 1);
    let packages = read_file(&file.bytes, &|plus, e| search.reads(plus, e), before);
    if !packages.in_packages.is_empty() {
        let current = |at: usize| packages.current_at(at).map(str::to_string);
        // The accessors of `:include`d slots are made later from each structure's entry.
        let templates = answer
            .structures
            .iter_mut()
            .filter_map(|s| s.include_entry.as_mut());
        for d in answer.definitions.iter_mut().chain(templates) {
            d.site.current = current(d.site.at);
        }
        let references = answer.references.iter_mut().flat_map(|r| r.uses.iter_mut());
        let calls = answer.callers.iter_mut().flat_map(|c| c.calls.iter_mut());
        for u in references.chain(calls) {
            u.site.current = current(u.site.at);
        }
    }
    exports_of_packages(&packages.definitions, answer);
    answer.packages = packages.definitions;
}

/// Each `defpackage` entry of the file gets the exports of the package it defines.
fn exports_of_packages(packages: &[PackageDef], answer: &mut FileAnswer) {
    // The first package of each name, as a search from the start would find it.
    let mut by_name: HashMap<&str, &PackageDef> = HashMap::new();
    for p in packages {
        by_name.entry(p.name.as_str()).or_insert(p);
    }
    for d in answer.definitions.iter_mut().filter(|d| {
        d.form.is_none() && matches!(&*symbol_key(&d.kind), "defpackage" | "define-package")
    }) {
        // `#:babel`, `:babel`, `"BABEL"`: the package's folded name.
        let name = symbol_key(&d.name).trim_matches('"').to_lowercase();
        if let Some(p) = by_name.get(name.as_str()) {
            d.exports = Some(p.exports.clone());
        }
    }
}

/// Resolves every entry of `gathered` with the packages `definitions` of the scope, keeps
/// those the search's package wants, splits and groups them.
pub(crate) fn resolve(gathered: &mut Gathered, definitions: Vec<PackageDef>, search: &Search) {
    let mut table = PackageTable::new(&definitions);
    let wanted = search.package.as_ref().map(|w| table.resolve(None, w));
    // An uninterned `#:foo` names no package: every package's `foo` (a `defpackage`'s
    // export clause).
    let keep = |r: &Resolved| {
        wanted
            .as_ref()
            .is_none_or(|w| r.package.is_none() || r.may_be(w))
    };
    let mut kept = Vec::new();
    for mut d in std::mem::take(&mut gathered.definitions) {
        let resolved = if names_a_package(&d) {
            Resolved::default()
        } else {
            table.resolve(d.site.current.as_deref(), &of_name(&d.name))
        };
        if keep(&resolved) {
            d.package = resolved.package;
            d.package_unresolved = resolved.unresolved;
            kept.push(d);
        }
    }
    gathered.definitions = kept;
    if matches!(search.target, Target::Text) {
        // A text's occurrences are not symbols: no package.
        return;
    }
    let mut kept = Vec::new();
    for r in std::mem::take(&mut gathered.references) {
        for (resolved, part) in by_package(&mut table, r) {
            if keep(&resolved) {
                kept.push(part);
            }
        }
    }
    gathered.references = kept;
    let mut kept = Vec::new();
    for c in std::mem::take(&mut gathered.callers) {
        for (resolved, part) in callers_by_package(&mut table, c) {
            if keep(&resolved) {
                kept.push(part);
            }
        }
    }
    gathered.callers = kept;
    if !matches!(search.target, Target::Pattern(_)) {
        group(&mut gathered.definitions, |d| &d.package);
        group(&mut gathered.references, |r| &r.package);
        group(&mut gathered.callers, |c| &c.package);
    }
}

/// A package's name or nickname (`defpackage`, and its derived `package` and `nickname`
/// entries) is a string designator, not a symbol of a package.
fn names_a_package(d: &Definition) -> bool {
    names_a_package_kind(&d.kind)
}

fn names_a_package_kind(kind: &str) -> bool {
    let kind = symbol_key(kind);
    let kind = kind.rsplit(':').next().unwrap_or_default();
    matches!(
        kind,
        "defpackage" | "define-package" | "package" | "nickname"
    )
}

/// The reference as one entry per package of its uses (in the order of their first use).
fn by_package(table: &mut PackageTable, mut r: Reference) -> Vec<(Resolved, Reference)> {
    // In a `defpackage` a keyword is a string designator, as `#:foo` is: no package.
    let designators = names_a_package_kind(&r.kind);
    split_uses(table, std::mem::take(&mut r.uses), designators)
        .into_iter()
        .map(|(resolved, uses)| {
            let mut part = r.clone();
            part.uses = uses;
            part.package.clone_from(&resolved.package);
            part.package_unresolved = resolved.unresolved;
            (resolved, part)
        })
        .collect()
}

/// The caller as one entry per package of the symbols it calls (in the order of their
/// first call).
fn callers_by_package(table: &mut PackageTable, mut c: Caller) -> Vec<(Resolved, Caller)> {
    split_uses(table, std::mem::take(&mut c.calls), false)
        .into_iter()
        .map(|(resolved, calls)| {
            let mut part = c.clone();
            part.calls = calls;
            part.package.clone_from(&resolved.package);
            part.package_unresolved = resolved.unresolved;
            (resolved, part)
        })
        .collect()
}

/// `uses` split by the package of each use's token, in the order of their first use;
/// `designators`: a keyword names no package (a `defpackage`'s clauses).
fn split_uses(
    table: &mut PackageTable,
    uses: Vec<super::Use>,
    designators: bool,
) -> Vec<(Resolved, Vec<super::Use>)> {
    let mut parts: Vec<(Resolved, Vec<super::Use>)> = Vec::new();
    // Each part by its resolution, once there are more than a few: a form may use a name
    // through many packages. Most use it through one or two, compared in place.
    const COMPARED: usize = 8;
    let mut part_of: HashMap<Resolved, usize> = HashMap::new();
    for u in uses {
        let token = u.site.token.as_deref().unwrap_or_default();
        let written = Written::parse(token);
        let resolved = if designators && written.prefix == Prefix::Keyword {
            Resolved::default()
        } else {
            table.resolve(u.site.current.as_deref(), &written)
        };
        let found = if parts.len() <= COMPARED {
            parts.iter().position(|(p, _)| *p == resolved)
        } else {
            if part_of.is_empty() {
                part_of.extend(parts.iter().enumerate().map(|(k, (p, _))| (p.clone(), k)));
            }
            part_of.get(&resolved).copied()
        };
        match found {
            Some(k) => parts[k].1.push(u),
            None => {
                if !part_of.is_empty() {
                    part_of.insert(resolved.clone(), parts.len());
                }
                parts.push((resolved, vec![u]));
            }
        }
    }
    parts
}

/// Orders `entries` by package, each package where its first entry was, the entries of
/// no package (`#:foo`, a `defpackage`'s names) last; stable.
fn group<T>(entries: &mut [T], package: impl Fn(&T) -> &Option<String>) {
    let mut first: HashMap<Option<String>, usize> = HashMap::new();
    for e in entries.iter() {
        let n = first.len();
        let place = if package(e).is_none() { usize::MAX } else { n };
        first.entry(package(e).clone()).or_insert(place);
    }
    entries.sort_by_key(|e| first[package(e)]);
}
