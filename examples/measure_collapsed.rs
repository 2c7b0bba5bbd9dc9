//! What the collapsed view shows of a corpus of Common Lisp files (docs/decisions.md,
//! BENCHMARKS.md). Run in release mode:
//!
//! ```text
//! cargo run --release --example measure_collapsed [-- DIR...]
//! cargo run --release --example measure_collapsed -- --operators [DIR...]
//! ```
//!
//! DIR defaults to the Debian corpus: `/usr/share/common-lisp/source` (the `cl-*`
//! packages) and `/usr/share/sbcl-source`. Every `.lisp`, `.lsp`, `.cl` and `.asd` file
//! is read through the library (`tool::read`, no line limit) and outlined; over every form
//! (top-level forms and container children) it prints:
//!
//! - the collapsed/raw byte ratio;
//! - definition names present on the line of their form (as `tests/views/corpus_views.rs`);
//! - **one-line short forms**: forms whose text is on one line and at most 100
//!   characters, and how many of them the view shows whole (verbatim);
//! - **library definers**: forms whose operator starts with `def` but is not one of the
//!   standard's defining macros, and whose element after the name is a list (a lambda list,
//!   specializers, superclasses); how many of them show that list (whole, or abbreviated
//!   past 120 characters as the generic rule does); the same for those of
//!   them that the generic `def...` rule classifies (no table entry);
//! - what showing one-line forms whole costs, for several thresholds.
//!
//! With `--operators`, the operators of top-level forms and container children instead:
//! forms, libraries using each, and how the built-in table classifies it.

#![allow(unreachable_pub)] // Helpers are `pub` for this program's own modules.

use lisp_read_file::grammar::{symbol_key, Grammar, Lookup};
use lisp_read_file::guard::Guard;
use lisp_read_file::outline::{
    abbreviate_balanced, fold, outline_bytes, OutlineItem, INFERRED_LIST_CHARS,
};
use lisp_read_file::scan::{self, ItemKind};
use lisp_read_file::tool::{self, ReadRequest};
use lisp_read_file::view::is_lisp_path;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

const DEFAULT_DIRS: &[&str] = &["/usr/share/common-lisp/source", "/usr/share/sbcl-source"];
/// The population of "one-line short forms" (the figure the team's issue measured).
const SHORT: usize = 100;
/// Thresholds whose cost is printed.
const THRESHOLDS: &[usize] = &[60, 80, 100, 120, 160];
/// The defining macros of the standard: their entries are not inferred.
const STANDARD: &[&str] = &[
    "defun",
    "defmacro",
    "defgeneric",
    "defmethod",
    "defclass",
    "define-condition",
    "defstruct",
    "deftype",
    "defvar",
    "defparameter",
    "defconstant",
    "define-symbol-macro",
    "define-compiler-macro",
    "define-modify-macro",
    "define-setf-expander",
    "defsetf",
    "define-method-combination",
    "defpackage",
];

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let operators = args.first().is_some_and(|a| a == "--operators");
    if operators {
        args.remove(0);
    }
    let dirs: Vec<PathBuf> = if args.is_empty() {
        DEFAULT_DIRS.iter().map(PathBuf::from).collect()
    } else {
        args.iter().map(PathBuf::from).collect()
    };
    let mut files = Vec::new();
    for dir in &dirs {
        for file in lisp_files(dir) {
            files.push((library(dir, &file), file));
        }
    }
    let grammar = Grammar::builtin();
    if operators {
        count_operators(&files, &grammar);
    } else {
        measure(&files, &grammar);
    }
}

/// Every Lisp file under `dir`, recursively, sorted (symbolic links not followed).
fn lisp_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            eprintln!("cannot list {}", dir.display());
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                dirs.push(path);
            } else if kind.is_file() && is_lisp_path(&path.to_string_lossy()) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The library a file belongs to: the first directory below `dir` (or `dir` itself).
fn library(dir: &Path, file: &Path) -> String {
    let rest = file.strip_prefix(dir).unwrap_or(file);
    match rest.components().count() {
        0 | 1 => dir.display().to_string(),
        _ => rest.components().next().map_or_else(String::new, |c| {
            c.as_os_str().to_string_lossy().into_owned()
        }),
    }
}

/// Every form of the outline with its depth: top-level items and container children.
fn forms<'o, 'a>(items: &'o [OutlineItem<'a>]) -> Vec<&'o OutlineItem<'a>> {
    let mut out = Vec::new();
    let mut stack: Vec<&OutlineItem> = items.iter().rev().collect();
    while let Some(item) = stack.pop() {
        if let Some(form) = &item.form {
            out.push(item);
            stack.extend(form.children.iter().rev());
        }
    }
    out
}

/// The text of every numbered line of a view, by line number.
fn lines_by_number(content: &str) -> HashMap<usize, String> {
    let mut map: HashMap<usize, String> = HashMap::new();
    for line in content.lines() {
        let Some((number, text)) = line.split_once(": ") else {
            continue;
        };
        let Ok(number) = number.trim_start().parse::<usize>() else {
            continue;
        };
        let entry = map.entry(number).or_default();
        entry.push_str(text);
        entry.push('\n');
    }
    map
}

#[derive(Default)]
struct Totals {
    files: usize,
    raw: usize,
    collapsed: usize,
    names: usize,
    names_missing: usize,
    forms: usize,
    short: usize,
    short_whole: usize,
    library_forms: usize,
    library_listed: usize,
    library_shown: usize,
    generic_forms: usize,
    generic_listed: usize,
    generic_shown: usize,
    /// For each threshold: one-line forms at most that long, and the bytes showing them
    /// whole adds to the collapsed view (their text minus their collapsed line).
    cost: Vec<(usize, usize)>,
    missed_short: BTreeMap<String, usize>,
    /// The first names missing from their line, with the line.
    missing: Vec<String>,
    missed_library: BTreeMap<String, usize>,
    missed_generic: BTreeMap<String, usize>,
}

fn measure(files: &[(String, PathBuf)], grammar: &Grammar) {
    let guard = Guard::unconfined(u64::MAX);
    let mut t = Totals {
        cost: vec![(0, 0); THRESHOLDS.len()],
        ..Totals::default()
    };
    for (_, path) in files {
        let shown = path.display().to_string();
        let mut request = ReadRequest::new(shown.clone());
        request.limit = usize::MAX;
        let result = match tool::read(&guard, grammar, &request) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{shown}: {e}");
                continue;
            }
        };
        let bytes = std::fs::read(path).expect("readable");
        t.files += 1;
        t.raw += bytes.len();
        t.collapsed += result.content.len();
        let outline = outline_bytes(&bytes, grammar);
        let lines = lines_by_number(&result.content);
        for item in forms(&outline.items) {
            let line = lines.get(&item.start_line).map_or("", String::as_str);
            measure_form(&mut t, &bytes, item, line);
        }
    }
    report(&t);
}

fn measure_form(t: &mut Totals, bytes: &[u8], item: &OutlineItem, line: &str) {
    let form = item.form.as_ref().expect("a form");
    t.forms += 1;
    if let Some(name) = &form.name {
        t.names += 1;
        // A line over 2,000 characters is cut (docs/views.md#long-lines): a name cut
        // there counts as present when what is shown of it is its start.
        let cut = line.split_once("…[+").is_some_and(|(visible, _)| {
            (0..visible.len())
                .filter(|&k| visible.is_char_boundary(k))
                .any(|k| visible.len() - k >= 20 && name.starts_with(&visible[k..]))
        });
        if !line.contains(name.as_ref()) && !cut {
            t.names_missing += 1;
            if t.missing.len() < 10 {
                let line: String = line.chars().take(200).collect();
                t.missing.push(format!("{name:.200?} not in {line:?}"));
            }
        }
    }
    let text = String::from_utf8_lossy(&bytes[item.start..item.end]);
    let whole = line.contains(text.as_ref());
    let chars = text.chars().count();
    let key = form.operator.as_deref().map(symbol_key).unwrap_or_default();
    if item.start_line == item.end_line {
        let mut folded = form.conditionals().join(" ");
        folded.push_str(form.signature());
        if let Some(doc) = form.doc() {
            folded.push_str(" ;; ");
            folded.push_str(doc);
        }
        let extra = text.len().saturating_sub(folded.len());
        for (k, &threshold) in THRESHOLDS.iter().enumerate() {
            if chars <= threshold {
                t.cost[k].0 += 1;
                t.cost[k].1 += extra;
            }
        }
        if chars <= SHORT {
            t.short += 1;
            if whole {
                t.short_whole += 1;
            } else {
                *t.missed_short.entry(key.clone()).or_default() += 1;
            }
        }
    }
    if !key.starts_with("def") || STANDARD.contains(&key.as_str()) {
        return;
    }
    let generic = form.definer == Some("def");
    t.library_forms += 1;
    t.generic_forms += usize::from(generic);
    if let Some((start, end)) = list_after_name(bytes, item) {
        // Shown whole, or abbreviated as the generic rule abbreviates it.
        let folded = fold(bytes, start, end);
        let shown = whole
            || line.contains(&folded)
            || line.contains(&abbreviate_balanced(&folded, INFERRED_LIST_CHARS));
        t.library_listed += 1;
        t.library_shown += usize::from(shown);
        if generic {
            t.generic_listed += 1;
            t.generic_shown += usize::from(shown);
        }
        if !shown && generic {
            *t.missed_generic.entry(key.clone()).or_default() += 1;
        }
        if !shown {
            *t.missed_library.entry(key).or_default() += 1;
        }
    }
}

/// Element 2 of a form written `(OP NAME (...) ...)`, when it is a list.
fn list_after_name(bytes: &[u8], item: &OutlineItem) -> Option<(usize, usize)> {
    if bytes.get(item.start) != Some(&b'(') || item.end < item.start + 2 {
        return None;
    }
    let inner = &bytes[item.start + 1..item.end - 1];
    let s = scan::scan(inner);
    let element = s.items.iter().filter(|i| i.kind == ItemKind::Form).nth(2)?;
    let start = item.start + 1 + element.span.start;
    (bytes[start] == b'(').then_some((start, item.start + 1 + element.span.end))
}

fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

fn top(map: &BTreeMap<String, usize>, n: usize) -> String {
    let mut v: Vec<(&String, &usize)> = map.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    v.iter()
        .take(n)
        .map(|(k, c)| format!("{k} {c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn report(t: &Totals) {
    println!("files:                      {}", t.files);
    println!("forms (with children):      {}", t.forms);
    println!("bytes raw:                  {}", t.raw);
    println!(
        "bytes collapsed:            {} ({:.2}% of raw)",
        t.collapsed,
        percent(t.collapsed, t.raw)
    );
    println!(
        "names present:              {} of {} ({} missing)",
        t.names - t.names_missing,
        t.names,
        t.names_missing
    );
    for miss in &t.missing {
        println!("  {miss}");
    }
    println!(
        "one-line forms <= {SHORT} chars: {} shown whole of {} ({:.2}%)",
        t.short_whole,
        t.short,
        percent(t.short_whole, t.short)
    );
    println!("  not whole, by operator:   {}", top(&t.missed_short, 12));
    println!(
        "library def... forms:       {} ({} with a list after the name; shown: {}, {:.2}%)",
        t.library_forms,
        t.library_listed,
        t.library_shown,
        percent(t.library_shown, t.library_listed)
    );
    println!(
        "  by the generic rule:      {} ({} with a list after the name; shown: {}, {:.2}%)",
        t.generic_forms,
        t.generic_listed,
        t.generic_shown,
        percent(t.generic_shown, t.generic_listed)
    );
    println!(
        "  list not shown, by operator: {}",
        top(&t.missed_library, 12)
    );
    println!("  ... by the generic rule:  {}", top(&t.missed_generic, 12));
    println!("cost of showing one-line forms whole (bytes over their collapsed line):");
    for (k, threshold) in THRESHOLDS.iter().enumerate() {
        let (n, extra) = t.cost[k];
        println!(
            "  <= {threshold:>3} chars: {n:>6} forms, +{extra:>8} bytes, +{:.2}% of raw",
            percent(extra, t.raw)
        );
    }
}

fn count_operators(files: &[(String, PathBuf)], grammar: &Grammar) {
    // operator -> (forms, one-line forms <= SHORT chars, libraries)
    let mut ops: HashMap<String, (usize, usize, BTreeSet<String>)> = HashMap::new();
    for (lib, path) in files {
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        let outline = outline_bytes(&bytes, grammar);
        for item in forms(&outline.items) {
            let Some(op) = item.form.as_ref().and_then(|f| f.operator.as_deref()) else {
                continue;
            };
            let entry = ops.entry(symbol_key(op)).or_default();
            entry.0 += 1;
            let short = item.start_line == item.end_line && item.end - item.start <= SHORT;
            entry.1 += usize::from(short);
            entry.2.insert(lib.clone());
        }
    }
    let mut v: Vec<_> = ops.into_iter().collect();
    v.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(&b.0)));
    println!(
        "{:<36} {:>7} {:>7} {:>5}  table",
        "operator", "forms", "short", "libs"
    );
    for (op, (n, short, libs)) in v.iter().take(400) {
        let how = match grammar.lookup(op) {
            Lookup::Definer(_) => "entry",
            Lookup::GenericDefiner => "def...",
            Lookup::Plain => "",
        };
        let some: Vec<&str> = libs.iter().take(4).map(String::as_str).collect();
        println!(
            "{op:<36} {n:>7} {short:>7} {:>5}  {how:<6} {}",
            libs.len(),
            some.join(" ")
        );
    }
}
