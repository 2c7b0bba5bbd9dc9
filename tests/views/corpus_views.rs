//! The collapsed view over a real corpus: every `*.lisp` file of the SBCL sources that
//! Debian packages as `sbcl-source` (installed at `/usr/share/sbcl-source`; CI installs
//! it; under `CI=true` a missing corpus fails the test, elsewhere it is skipped with a notice).
//!
//! For every file, through the library (`tool::read`, unconfined, no size cap in the way,
//! no line limit): no panic, no error, mode `lisp-collapsed`, nothing cut, and every
//! definition the outline names (top-level forms and container children, recursively)
//! appears by name on the view's line numbered with the form's start line.
//!
//! Run it in release mode to see the totals:
//! `cargo test --release --test views corpus_views -- --nocapture`.

use lisp_read_file::grammar::Grammar;
use lisp_read_file::guard::Guard;
use lisp_read_file::outline::{outline_bytes, OutlineItem};
use lisp_read_file::tool::{self, ReadRequest};
use lisp_read_file::view::{Mode, MAX_LINE_CHARS};
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::common;
const CORPUS: &str = "/usr/share/sbcl-source";
/// Far above any file of the corpus: nothing is refused for size.
const MAX_FILE_BYTES: u64 = 100 * 1024 * 1024;
/// How many misses to print.
const SHOW: usize = 20;

/// Every `*.lisp` under `dir`, recursively, sorted.
fn lisp_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
        for entry in entries {
            let entry = entry.expect("directory entry");
            let kind = entry.file_type().expect("file type");
            let path = entry.path();
            if kind.is_dir() {
                dirs.push(path);
            } else if kind.is_file() && path.extension().is_some_and(|e| e == "lisp") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The text of every numbered line of a view, by line number (several view lines may
/// share a number: a container's head and a child on the same source line).
fn lines_by_number(content: &str) -> HashMap<usize, String> {
    let mut map: HashMap<usize, String> = HashMap::new();
    for line in content.lines() {
        let Some((number, text)) = line.split_once(": ") else {
            continue; // a note
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

/// Every named form of the outline: top-level items and container children, recursively
/// (with an explicit stack: no recursion on nesting depth).
fn named_forms(items: &[OutlineItem]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut stack: Vec<&OutlineItem> = items.iter().rev().collect();
    while let Some(item) = stack.pop() {
        if let Some(form) = &item.form {
            if let Some(name) = &form.name {
                out.push((item.start_line, name.to_string()));
            }
            stack.extend(form.children.iter().rev());
        }
    }
    out
}

/// How a name shows on a view line.
enum Shown {
    Whole,
    /// The line is longer than [`MAX_LINE_CHARS`] and cut (docs/views.md#long-lines) inside the name:
    /// what is visible ends with the start of the name (at least 20 characters of it).
    UpToTheCut,
    No,
}

fn name_on_line(text: &str, name: &str) -> Shown {
    if text.contains(name) {
        return Shown::Whole;
    }
    let head: String = name.chars().take(20).collect();
    for line in text.lines() {
        let Some((visible, _)) = line.split_once("…[+") else {
            continue;
        };
        if let Some(at) = visible.find(&head) {
            if name.starts_with(&visible[at..]) {
                return Shown::UpToTheCut;
            }
        }
    }
    Shown::No
}

/// The first `max` characters of `text`, for messages.
fn abbreviate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_string(),
    }
}

#[test]
fn collapsed_view_of_the_sbcl_sources_names_every_definition() {
    let corpus = Path::new(CORPUS);
    let how = "this corpus test needs them; `apt-get install sbcl-source`";
    if !common::tool_available(corpus.is_dir(), &format!("SBCL's sources ({CORPUS})"), how) {
        return;
    }
    let files = lisp_files(corpus);
    assert!(!files.is_empty(), "no *.lisp files under {CORPUS}");

    let guard = Guard::unconfined(MAX_FILE_BYTES);
    let grammar = Grammar::builtin();
    let started = Instant::now();
    let (mut raw_bytes, mut view_bytes, mut checked) = (0usize, 0usize, 0usize);
    let mut failures: Vec<String> = Vec::new();
    let mut misses: Vec<String> = Vec::new();
    let mut miss_count = 0usize;
    let mut cut_names = 0usize;

    for path in &files {
        let shown = path.display().to_string();
        let mut request = ReadRequest::new(shown.clone());
        request.limit = usize::MAX;
        let outcome = catch_unwind(AssertUnwindSafe(|| tool::read(&guard, &grammar, &request)));
        let result = match outcome {
            Err(_) => {
                failures.push(format!("{shown}: panicked"));
                continue;
            }
            Ok(Err(e)) => {
                failures.push(format!("{shown}: {e}"));
                continue;
            }
            Ok(Ok(result)) => result,
        };
        if result.mode != Mode::LispCollapsed {
            failures.push(format!("{shown}: mode {:?}", result.mode));
            continue;
        }
        if result.meta.truncated {
            failures.push(format!("{shown}: cut although the limit is unbounded"));
        }
        raw_bytes += result.meta.byte_length;
        view_bytes += result.content.len();

        let bytes = std::fs::read(path).expect("readable");
        let outline = outline_bytes(&bytes, &grammar);
        let lines = lines_by_number(&result.content);
        for (line, name) in named_forms(&outline.items) {
            checked += 1;
            let text = lines.get(&line).map(String::as_str).unwrap_or("");
            let found = match name_on_line(text, &name) {
                Shown::Whole => true,
                Shown::UpToTheCut => {
                    cut_names += 1;
                    true
                }
                Shown::No => false,
            };
            if !found {
                miss_count += 1;
                if misses.len() < SHOW {
                    misses.push(format!(
                        "{shown}:{line}: name {:?} not on view line {line}: {:?}",
                        abbreviate(&name, 200),
                        abbreviate(text, 300)
                    ));
                }
            }
        }
    }
    let elapsed = started.elapsed();

    let ratio = if raw_bytes == 0 {
        0.0
    } else {
        100.0 * view_bytes as f64 / raw_bytes as f64
    };
    println!("corpus:              {CORPUS}");
    println!("files:               {}", files.len());
    println!("bytes raw:           {raw_bytes}");
    println!("bytes collapsed:     {view_bytes}");
    println!("ratio:               {ratio:.2}% (collapsed/raw)");
    println!("definitions checked: {checked}");
    println!("names cut at {MAX_LINE_CHARS} chars: {cut_names} (shown up to the cut of an over-long line, docs/views.md#long-lines)");
    println!("names missing:       {miss_count}");
    println!(
        "elapsed:             {:.2?} (read + view + outline)",
        elapsed
    );

    assert!(
        failures.is_empty(),
        "{} file(s) failed:\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
    assert!(checked > 0, "no named definitions found in {CORPUS}");
    assert!(
        miss_count == 0,
        "{miss_count} of {checked} definition names missing from the collapsed view; the first {}:\n  {}",
        misses.len(),
        misses.join("\n  ")
    );
}
