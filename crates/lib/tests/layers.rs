//! The layers inside the library crate, checked from its source (ARCHITECTURE.md#layers).
//!
//! The crate boundaries make the compiler refuse an import from the reader crate back up
//! into the library, or from the library into the surfaces. Inside this crate the order is
//! kept by this test: a module may use only the modules before it in [`LAYERS`], and the
//! files of one module directory may not use each other in a cycle (shared code goes to
//! the parent module or a file of its own). Test code (`tests.rs`, `#[cfg(test)]` blocks)
//! and comments are not looked at.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The library's top-level modules, lowest first: each may use the ones before it (and the
/// reader crate's modules, re-exported at the crate root).
const LAYERS: &[&str] = &[
    "error",
    "hint",
    "shown",
    "pattern",
    "alternation",
    "caseless",
    "document",
    "guard",
    "model",
    "view",
    "project",
    "find",
    "index",
    "definers",
    "tool",
];

/// The reader crate's modules, re-exported by the library: below every layer here.
const READER: &[&str] = &["cancel", "features", "grammar", "outline", "scan", "source"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without comments, test files and `#[cfg(test)]` items.
fn code_of(path: &Path) -> String {
    if path.file_name().is_some_and(|n| n == "tests.rs") {
        return String::new();
    }
    let text = fs::read_to_string(path).unwrap();
    let mut code = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("//") {
            continue;
        }
        if trimmed.starts_with("#[cfg(test)]") {
            // The item after it: up to the line that closes it at the same indentation
            // (a `mod tests;` line closes itself).
            let indent = line.len() - trimmed.len();
            for next in lines.by_ref() {
                let t = next.trim_start();
                if t.ends_with(';') && !t.contains('{')
                    || next.len() - t.len() == indent && t.starts_with('}')
                {
                    break;
                }
            }
            continue;
        }
        code.push_str(line);
        code.push('\n');
    }
    code
}

/// The top-level module a file belongs to (`guard/walk.rs` → `guard`, `tool.rs` → `tool`).
fn top_module(path: &Path) -> String {
    let rel = path.strip_prefix(src()).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// The names after each `crate::` in `code`.
fn crate_uses(code: &str) -> BTreeSet<String> {
    let mut uses = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let preceded_by_ident = code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        if preceded_by_ident {
            continue; // `lisp_read_file_crate::` or similar: not this crate
        }
        let name: String = code[at + 7..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            uses.insert(name);
        }
    }
    uses
}

#[test]
fn a_module_uses_only_the_layers_below_it() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let rank = |m: &str| LAYERS.iter().position(|l| *l == m);
    let mut breaks = Vec::new();
    for path in &files {
        let module = top_module(path);
        if module == "lib" {
            continue;
        }
        let Some(own) = rank(&module) else {
            panic!(
                "{}: module `{module}` is in no layer: add it to LAYERS (and ARCHITECTURE.md)",
                path.display()
            );
        };
        for used in crate_uses(&code_of(path)) {
            if used == module
                || READER.contains(&used.as_str())
                || used == "ErrorCode"
                || used == "ToolError"
            {
                continue;
            }
            match rank(&used) {
                Some(r) if r < own => {}
                Some(_) => breaks.push(format!("{} uses crate::{used}", path.display())),
                None => breaks.push(format!(
                    "{} uses crate::{used}, in no layer",
                    path.display()
                )),
            }
        }
    }
    assert!(
        breaks.is_empty(),
        "imports against the layers:\n  {}",
        breaks.join("\n  ")
    );
}

#[test]
fn the_files_of_a_module_use_each_other_in_no_cycle() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    // Edges between sibling files of one directory, from `super::x` and `crate::dir::x`.
    let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for path in &files {
        let dir = path.parent().unwrap();
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        if stem == "mod" {
            continue;
        }
        let code = code_of(path);
        let module_path = dir
            .strip_prefix(src())
            .unwrap()
            .to_string_lossy()
            .replace('/', "::");
        for sibling in &files {
            if sibling == path || sibling.parent() != Some(dir) {
                continue;
            }
            let name = sibling.file_stem().unwrap().to_string_lossy().to_string();
            let uses = |prefix: &str| {
                code.match_indices(prefix).any(|(at, _)| {
                    let rest = &code[at + prefix.len()..];
                    rest.starts_with(&name)
                        && !rest[name.len()..]
                            .starts_with(|c: char| c.is_alphanumeric() || c == '_')
                })
            };
            let braced = code.contains("super::{") && {
                // `use super::{a::X, ...}`: look inside the braces for `name::`.
                code.split("super::{").skip(1).any(|tail| {
                    let inside = &tail[..tail.find('}').unwrap_or(tail.len())];
                    inside
                        .split(|c: char| c == ',' || c.is_whitespace())
                        .any(|item| item.starts_with(&format!("{name}::")))
                })
            };
            if uses("super::")
                || braced
                || (!module_path.is_empty() && uses(&format!("crate::{module_path}::")))
            {
                edges
                    .entry(path.clone())
                    .or_default()
                    .insert(sibling.clone());
            }
        }
    }
    let mut cycles = Vec::new();
    for (from, tos) in &edges {
        for to in tos {
            if edges.get(to).is_some_and(|back| back.contains(from)) && from < to {
                cycles.push(format!("{} <-> {}", from.display(), to.display()));
            }
        }
    }
    assert!(
        cycles.is_empty(),
        "sibling files that use each other:\n  {}",
        cycles.join("\n  ")
    );
}
