//! The package forms of one file (docs/find.md#packages): each `defpackage` (also
//! `cl:defpackage`, `uiop:define-package`, `uiop/package:define-package`) read as data,
//! and each top-level `in-package` with where it ends, so that a form's current package
//! is the last `in-package` before it.
//!
//! Cheap on files without them: two `memmem` passes (`ackage`, `ACKAGE`) find the places
//! where `defpackage`, `define-package` or `in-package` is spelled; a file without one is
//! done. Otherwise one top-level scan up to the last such place, parsing only the
//! forms that hold one. Names are folded as the search folds symbols (lowercase, escapes
//! removed); strings (`"CL-PPCRE"`) are folded the same way. Nothing is evaluated.

use super::symbols::Written;
use crate::scan::{scan_each, Datum, Elements, ItemKind};
use std::ops::ControlFlow;

/// One package definition, names folded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PackageDef {
    pub(crate) name: String,
    pub(crate) nicknames: Vec<String>,
    /// `:use` (and `uiop:define-package`'s `:mix`, `:use-reexport`, `:mix-reexport`), in
    /// order.
    pub(crate) uses: Vec<String>,
    /// `:shadow` names.
    pub(crate) shadows: Vec<String>,
    /// `(:shadowing-import-from PACKAGE NAME...)`: (package, name).
    pub(crate) shadowing_imports: Vec<(String, String)>,
    /// `(:import-from PACKAGE NAME...)`: (package, name).
    pub(crate) imports: Vec<(String, String)>,
    pub(crate) exports: Vec<String>,
    /// `uiop:define-package`'s `:reexport` (and `:use-reexport`, `:mix-reexport`): packages
    /// whose external symbols this one exports too.
    pub(crate) reexports: Vec<String>,
    /// `(:local-nicknames (NICKNAME PACKAGE)...)`.
    pub(crate) local_nicknames: Vec<(String, String)>,
}

/// What one file says about packages.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FilePackages {
    pub(crate) definitions: Vec<PackageDef>,
    /// Each top-level `in-package`: the byte where its form ends, the package named.
    pub(crate) in_packages: Vec<(usize, String)>,
}

impl FilePackages {
    /// The package named by the last `in-package` that ends at or before `at`
    /// (`None`: no `in-package` before it).
    pub(crate) fn current_at(&self, at: usize) -> Option<&str> {
        let k = self.in_packages.partition_point(|(end, _)| *end <= at);
        k.checked_sub(1).map(|k| self.in_packages[k].1.as_str())
    }
}

/// Reads the package forms of `b`. `reads(plus, expression)` says whether the reader
/// reads a datum under `#+expression` (`plus`) or `#-expression` (the search's features).
/// The `in-package` forms are wanted before `in_packages_before` only (the last place an
/// entry was found, 0 for none): the scan stops after the last form wanted, so a file
/// where nothing was found is read up to its last package definition.
pub(crate) fn read_file(
    b: &[u8],
    reads: &dyn Fn(bool, &[u8]) -> bool,
    in_packages_before: usize,
) -> FilePackages {
    let mut out = FilePackages::default();
    let mut hits = operator_places(b);
    hits.retain(|&h| {
        h < in_packages_before
            || !b
                .get(h..h + 3)
                .is_some_and(|w| w.eq_ignore_ascii_case(b"in-"))
    });
    let Some(&last) = hits.last() else {
        return out;
    };
    let keep = |d: &Datum| conditionals_read(b, &d.conditionals, reads);
    let mut next = 0usize;
    scan_each(b, &mut |item| {
        if item.span.start > last {
            return ControlFlow::Break(());
        }
        while next < hits.len() && hits[next] < item.span.start {
            next += 1;
        }
        let holds = hits.get(next).is_some_and(|&h| h < item.span.end);
        if !holds
            || item.kind != ItemKind::Form
            || !item.core_is_list
            || item.quoted
            || !conditionals_read(b, &item.conditionals, reads)
        {
            return ControlFlow::Continue(());
        }
        let elements: Vec<Datum> = Elements::new(b, item.core, item.span.end)
            .filter(|d| keep(d))
            .collect();
        match operator(b, &elements).as_deref() {
            Some("defpackage" | "define-package") => {
                out.definitions.extend(definition(b, &elements, &keep));
            }
            Some("in-package") => {
                if let Some(name) = elements.get(1).and_then(|d| designator(b, d)) {
                    out.in_packages.push((item.span.end, name));
                }
            }
            // `(eval-when (...) (defpackage ...))`, deeper in `locally`, `handler-bind` ...
            _ => {
                let within = &hits[next..hits.partition_point(|&h| h < item.span.end)];
                nested(
                    b,
                    (item.span.start, item.span.end),
                    within,
                    reads,
                    &keep,
                    &mut out,
                );
            }
        }
        ControlFlow::Continue(())
    });
    out
}

/// The `defpackage` forms inside the top-level form `span` (any depth), at the places
/// `hits`: a token there (not text in a string or comment) right after a `(`.
fn nested(
    b: &[u8],
    (start, end): (usize, usize),
    hits: &[usize],
    reads: &dyn Fn(bool, &[u8]) -> bool,
    keep: &dyn Fn(&Datum) -> bool,
    out: &mut FilePackages,
) {
    let Some(&last) = hits.last() else { return };
    let mut next = 0usize;
    // The end of the last package definition read: the places inside it are its options'
    // text, and reading each would read the rest of it again (quadratic when they nest).
    let mut read_to = 0usize;
    let mut reads = |plus, e: &[u8]| reads(plus, e);
    crate::scan::each_token_read(b, start, end, &mut reads, &mut |s, e| {
        while next < hits.len() && hits[next] < s {
            next += 1;
        }
        let place = hits.get(next).copied().filter(|&h| h < e && s >= read_to);
        // An `in-package` is not read here: only a definition's options are.
        let defines = place.is_some_and(|h| {
            !b.get(h..h + 3)
                .is_some_and(|w| w.eq_ignore_ascii_case(b"in-"))
        });
        if defines {
            let open = b[..s].iter().rposition(|c| !c.is_ascii_whitespace());
            if let Some(open) = open.filter(|&o| b[o] == b'(') {
                let all: Vec<Datum> = Elements::new(b, open, end).collect();
                read_to = all.last().map_or(e, |d| d.end);
                let parts: Vec<Datum> = all.into_iter().filter(|d| keep(d)).collect();
                if matches!(
                    operator(b, &parts).as_deref(),
                    Some("defpackage" | "define-package")
                ) {
                    out.definitions.extend(definition(b, &parts, keep));
                }
            }
        }
        if e > last {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
}

/// Where `defpackage`, `define-package` or `in-package` (any package prefix, any case)
/// starts in `b`, in order: one pass over the bytes for `package` in every case (a search
/// reads every byte of the scope once more here), each match's head checked in place.
pub(crate) fn operator_places(b: &[u8]) -> Vec<usize> {
    let mut out = Vec::new();
    static PACKAGE: std::sync::LazyLock<crate::caseless::Caseless> =
        std::sync::LazyLock::new(|| crate::caseless::Caseless::new(b"package"));
    for p in PACKAGE.find_iter(b) {
        if !b.get(p + 7).is_none_or(|&c| ends_token(c)) {
            continue;
        }
        let start = [&b"def"[..], b"define-", b"in-"].iter().find_map(|head| {
            let s = p.checked_sub(head.len())?;
            let before_ok = s == 0 || starts_token(b[s - 1]);
            (b[s..p].eq_ignore_ascii_case(head) && before_ok).then_some(s)
        });
        out.extend(start);
    }
    out
}

fn ends_token(c: u8) -> bool {
    c.is_ascii_whitespace() || matches!(c, b'(' | b')' | b'"' | b'\'' | b';' | b'`' | b',')
}

fn starts_token(c: u8) -> bool {
    ends_token(c) || c == b':' || c == b'|' || c == b'/'
}

fn conditionals_read(
    b: &[u8],
    conditionals: &[crate::scan::Span],
    reads: &dyn Fn(bool, &[u8]) -> bool,
) -> bool {
    conditionals.iter().all(|c| {
        let text = &b[c.start..c.end];
        text.len() <= 2 || reads(text[1] == b'+', &text[2..])
    })
}

/// The folded name (no package) of the first element when it is a symbol.
fn operator(b: &[u8], elements: &[Datum]) -> Option<String> {
    let first = elements.first()?;
    symbol_text(b, first).map(fold_symbol)
}

/// A `defpackage` form's elements as a package definition.
fn definition(b: &[u8], elements: &[Datum], keep: &dyn Fn(&Datum) -> bool) -> Option<PackageDef> {
    let mut def = PackageDef {
        name: designator(b, elements.get(1)?)?,
        ..PackageDef::default()
    };
    for option in elements.iter().skip(2).filter(|d| d.core_is_list) {
        let parts = list(b, option, keep);
        let Some(key) = parts
            .first()
            .and_then(|k| symbol_text(b, k))
            .map(fold_symbol)
        else {
            continue;
        };
        let names = || parts.iter().skip(1).filter_map(|d| designator(b, d));
        let from_package = || {
            let mut names = names();
            let package = names.next().unwrap_or_default();
            names.map(move |n| (package.clone(), n))
        };
        match key.as_str() {
            "nicknames" => def.nicknames.extend(names()),
            "use" | "mix" => def.uses.extend(names()),
            "use-reexport" | "mix-reexport" => {
                def.uses.extend(names());
                def.reexports.extend(names());
            }
            "reexport" => def.reexports.extend(names()),
            "shadow" => def.shadows.extend(names()),
            "shadowing-import-from" => def.shadowing_imports.extend(from_package()),
            "import-from" => def.imports.extend(from_package()),
            "export" => def.exports.extend(names()),
            "local-nicknames" => {
                for pair in parts.iter().skip(1) {
                    let pair = list(b, pair, keep);
                    if let (Some(nick), Some(package)) = (
                        pair.first().and_then(|d| designator(b, d)),
                        pair.get(1).and_then(|d| designator(b, d)),
                    ) {
                        def.local_nicknames.push((nick, package));
                    }
                }
            }
            _ => {}
        }
    }
    Some(def)
}

fn list(b: &[u8], datum: &Datum, keep: &dyn Fn(&Datum) -> bool) -> Vec<Datum> {
    if !datum.core_is_list || datum.quoted {
        return Vec::new();
    }
    Elements::new(b, datum.core, datum.end)
        .filter(|d| keep(d))
        .collect()
}

/// The text of an element that is a symbol (`foo`, `:foo`, `#:foo`, `pkg::foo`).
fn symbol_text<'b>(b: &'b [u8], d: &Datum) -> Option<&'b str> {
    if d.core_is_list || d.quoted {
        return None;
    }
    let text = std::str::from_utf8(b.get(d.core..d.end)?).ok()?;
    let first = *text.as_bytes().first()?;
    (first != b'"' && (first != b'#' || text.starts_with("#:"))).then_some(text)
}

/// A string designator's name, folded: `"CL-PPCRE"`, `:cl-ppcre`, `#:cl-ppcre`,
/// `cl-ppcre`.
pub(crate) fn designator(b: &[u8], d: &Datum) -> Option<String> {
    if d.core_is_list || d.quoted {
        return None;
    }
    let text = std::str::from_utf8(b.get(d.core..d.end)?).ok()?;
    if let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        let mut out = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            let c = if c == '\\' { chars.next() } else { Some(c) };
            out.extend(c.into_iter().flat_map(char::to_lowercase));
        }
        return Some(out);
    }
    let name = fold_symbol(symbol_text(b, d)?);
    (!name.is_empty()).then_some(name)
}

/// A symbol's name without its package, escapes removed, lowercase.
fn fold_symbol(text: &str) -> String {
    Written::parse(text).name.into()
}
