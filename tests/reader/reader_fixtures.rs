//! Fixture tests for the scanner and the outline (docs/reader.md, docs/reader.md#definer-table, docs/tool.md#outline-json).
//!
//! * Every production of `grammar/reader.ebnf` has a fixture `fixtures/reader/<name>.lisp`,
//!   and every file there is named after a production.
//! * Every file under `fixtures/` (any extension) scans losslessly: the items tile the
//!   bytes, in order, none empty, and each item's kind and lines agree with its bytes.
//! * Every fixture under `fixtures/{reader,tolerance,definers}/` has its outline
//!   snapshot-tested as pretty JSON (the format of docs/tool.md#outline-json,
//!   with the fixture's path): `tests/reader/snapshots/reader__reader_fixtures__<dir>__<file>.snap`, where
//!   `<file>` drops a `.lisp` extension and keeps any other (`definers__system.asd`).
//!
//! To write new or changed snapshots: `INSTA_UPDATE=always cargo test --test
//! reader reader_fixtures` (or `cargo insta test --accept`), then read every changed snapshot
//! against its fixture before committing.

use lisp_read_file::grammar::Grammar;
use lisp_read_file::outline::{outline_bytes, Outline};
use lisp_read_file::scan::{scan, ItemKind};
use serde::Serialize;
use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// The prefix insta gives this test file's snapshots.
const SNAPSHOT_PREFIX: &str = "reader__reader_fixtures__";
/// The fixture directories whose outlines are snapshot-tested here. Other directories
/// under `fixtures/` (e.g. `views/`) belong to other tests; they are only checked for the
/// lossless cover.
const SNAPSHOT_DIRS: &[&str] = &["reader", "tolerance", "definers"];

fn fixtures_dir() -> PathBuf {
    Path::new(ROOT).join("fixtures")
}

/// Every file under `fixtures/`, recursively, sorted by path.
fn fixture_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![fixtures_dir()];
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot read directory {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(
        !files.is_empty(),
        "no fixtures under {}",
        fixtures_dir().display()
    );
    files
}

/// The path of a fixture relative to `fixtures/`, with `/` separators.
fn relative(path: &Path) -> String {
    let rel = path
        .strip_prefix(fixtures_dir())
        .expect("fixture under fixtures/");
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// The fixtures whose outlines are snapshot-tested, sorted by path.
fn snapshot_fixtures() -> Vec<PathBuf> {
    fixture_files()
        .into_iter()
        .filter(|p| {
            let rel = relative(p);
            SNAPSHOT_DIRS
                .iter()
                .any(|dir| rel.strip_prefix(dir).is_some_and(|r| r.starts_with('/')))
        })
        .collect()
}

/// The snapshot name of a fixture: `reader/character.lisp` → `reader__character`,
/// `tolerance/script.ros` → `tolerance__script.ros`.
fn snapshot_name(rel: &str) -> String {
    rel.strip_suffix(".lisp").unwrap_or(rel).replace('/', "__")
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Production names of `grammar/reader.ebnf`, in file order.
fn productions() -> Vec<String> {
    let path = Path::new(ROOT).join("crates/reader/grammar/reader.ebnf");
    let text = String::from_utf8(read(&path)).expect("reader.ebnf is UTF-8");
    let head = regex::Regex::new(r"^([a-z][a-z-]*)\s+=").expect("valid regex");
    let names: Vec<String> = text
        .lines()
        .filter_map(|line| head.captures(line).map(|c| c[1].to_string()))
        .collect();
    assert!(
        !names.is_empty(),
        "no productions found in {}",
        path.display()
    );
    names
}

#[test]
fn every_production_has_a_fixture() {
    let dir = fixtures_dir().join("reader");
    let missing: Vec<String> = productions()
        .into_iter()
        .filter(|name| !dir.join(format!("{name}.lisp")).is_file())
        .map(|name| format!("fixtures/reader/{name}.lisp"))
        .collect();
    assert!(
        missing.is_empty(),
        "{} production(s) of grammar/reader.ebnf have no fixture:\n  {}",
        missing.len(),
        missing.join("\n  ")
    );
}

#[test]
fn every_reader_fixture_is_a_production() {
    let names: BTreeSet<String> = productions().into_iter().collect();
    let stray: Vec<String> = fixture_files()
        .iter()
        .map(|p| relative(p))
        .filter_map(|rel| rel.strip_prefix("reader/").map(str::to_string))
        .filter(|file| {
            file.strip_suffix(".lisp")
                .is_none_or(|name| !names.contains(name))
        })
        .map(|file| format!("fixtures/reader/{file}"))
        .collect();
    assert!(
        stray.is_empty(),
        "fixture(s) named after no production of grammar/reader.ebnf:\n  {}",
        stray.join("\n  ")
    );
}

/// The lossless cover of docs/reader.md, and what each item kind promises about its bytes.
fn check_cover(rel: &str, bytes: &[u8]) -> Vec<String> {
    let s = scan(bytes);
    let mut problems = Vec::new();
    let line_of = |offset: usize| 1 + bytes[..offset].iter().filter(|&&c| c == b'\n').count();
    let mut pos = 0;
    for (k, item) in s.items.iter().enumerate() {
        let (start, end) = (item.span.start, item.span.end);
        let at = format!("{rel}: item {k} ({:?} {start}..{end})", item.kind);
        if start != pos {
            problems.push(format!("{at}: starts at {start}, expected {pos}"));
        }
        if end <= start || end > bytes.len() {
            problems.push(format!("{at}: empty or past the end ({})", bytes.len()));
            pos = end.max(pos);
            continue;
        }
        pos = end;
        let text = &bytes[start..end];
        let kind_ok = match item.kind {
            ItemKind::Whitespace => text
                .strip_prefix(b"\xEF\xBB\xBF".as_slice())
                .unwrap_or(text)
                .iter()
                .all(|c| b" \t\n\r\x0c".contains(c)),
            ItemKind::Comment => {
                // `;`, `#|`, or `#n|` (a numeric argument, which SBCL ignores).
                let digits = text
                    .iter()
                    .skip(1)
                    .take_while(|c| c.is_ascii_digit())
                    .count();
                text.starts_with(b";")
                    || (text.first() == Some(&b'#') && text.get(1 + digits) == Some(&b'|'))
            }
            ItemKind::Shebang => text.starts_with(b"#!") && !text.contains(&b'\n'),
            ItemKind::Stray => text == b")",
            ItemKind::Form => !b" \t\n\r\x0c;)".contains(&text[0]),
        };
        if !kind_ok {
            problems.push(format!("{at}: bytes do not fit the kind: {text:?}"));
        }
        if item.kind == ItemKind::Form && !(start..end).contains(&item.core) {
            problems.push(format!("{at}: core {} outside the form", item.core));
        }
        let lines = (line_of(start), line_of(end - 1));
        if (item.start_line, item.end_line) != lines {
            problems.push(format!(
                "{at}: lines {}-{}, expected {}-{}",
                item.start_line, item.end_line, lines.0, lines.1
            ));
        }
    }
    if pos != bytes.len() {
        problems.push(format!(
            "{rel}: items end at {pos}, the file at {}",
            bytes.len()
        ));
    }
    for d in &s.diagnostics {
        if d.item >= s.items.len() || d.offset > bytes.len() || d.line != line_of(d.offset) {
            problems.push(format!("{rel}: diagnostic out of place: {d:?}"));
        }
    }
    problems
}

#[test]
fn every_fixture_scans_losslessly() {
    let problems: Vec<String> = fixture_files()
        .iter()
        .flat_map(|path| check_cover(&relative(path), &read(path)))
        .collect();
    assert!(
        problems.is_empty(),
        "lossless cover broken:\n  {}",
        problems.join("\n  ")
    );
}

/// What a snapshot holds: the outline JSON of docs/tool.md#outline-json, `path` included.
#[derive(Serialize)]
struct FileOutline<'a> {
    path: &'a str,
    #[serde(flatten)]
    outline: &'a Outline<'a>,
}

#[test]
fn every_fixture_outline_matches_its_snapshot() {
    let grammar = Grammar::builtin();
    let mut failed = Vec::new();
    for path in snapshot_fixtures() {
        let rel = relative(&path);
        let json = serde_json::to_string_pretty(&FileOutline {
            path: &format!("fixtures/{rel}"),
            outline: &outline_bytes(&read(&path), &grammar),
        })
        .expect("outline serializes");
        let name = snapshot_name(&rel);
        let mut settings = insta::Settings::clone_current();
        settings.set_input_file(&path);
        settings.set_omit_expression(true);
        settings.set_snapshot_path(Path::new(ROOT).join("tests/reader/snapshots"));
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            settings.bind(|| insta::assert_snapshot!(name.as_str(), json));
        }));
        if outcome.is_err() {
            failed.push(format!("fixtures/{rel} ({SNAPSHOT_PREFIX}{name}.snap)"));
        }
    }
    assert!(
        failed.is_empty(),
        "{} outline(s) differ from their snapshots:\n  {}",
        failed.len(),
        failed.join("\n  ")
    );
}

#[test]
fn every_snapshot_has_a_fixture() {
    let names: BTreeSet<String> = snapshot_fixtures()
        .iter()
        .map(|p| snapshot_name(&relative(p)))
        .collect();
    let dir = Path::new(ROOT).join("tests/reader/snapshots");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return; // no snapshots yet: the snapshot test reports every fixture
    };
    let mut orphans: Vec<String> = entries
        .map(|e| {
            e.expect("directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter_map(|file| {
            let name = file
                .strip_prefix(SNAPSHOT_PREFIX)?
                .strip_suffix(".snap")?
                .to_string();
            (!names.contains(&name)).then_some(file)
        })
        .collect();
    orphans.sort();
    assert!(
        orphans.is_empty(),
        "snapshot(s) whose fixture is gone (delete them):\n  {}",
        orphans.join("\n  ")
    );
}
