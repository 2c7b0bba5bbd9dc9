//! `find`'s collection budget (docs/find.md#paging): spent in the scope's file order, so
//! a search it stops gives the same answer on every run, says so in JSON
//! (`stopped_at_budget`) and says where it stopped.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");

/// A directory of `files`, each `(name, definitions calling foo)`.
fn scope(name: &str, files: &[(&str, usize)]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, callers) in files {
        let text: String = (0..*callers)
            .map(|i| format!("(defun g{i} () (foo))\n"))
            .collect();
        std::fs::write(dir.join(file), text).unwrap();
    }
    dir
}

fn callers_of_foo(dir: &Path) -> Value {
    find_foo(dir, "--callers")
}

/// `find MODE foo --limit 1 --json` over `dir`, which must succeed.
fn find_foo(dir: &Path, mode: &str) -> Value {
    let out = Command::new(BIN)
        .args(["find", mode, "foo", "--limit", "1", "--json", "--root"])
        .arg(dir)
        .arg(".")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn note(result: &Value) -> &str {
    let content = result["content"].as_str().unwrap();
    content
        .lines()
        .find(|l| l.starts_with("[the search stopped"))
        .unwrap_or_default()
}

#[test]
fn a_budget_spent_across_many_files_cuts_at_the_same_file_on_every_run() {
    // Each file: 6,000 callers of one call each, 12,000 entries and uses; the 17th file
    // takes the total past 200,000.
    let names: Vec<String> = (0..40).map(|i| format!("f{i:02}.lisp")).collect();
    let files: Vec<(&str, usize)> = names.iter().map(|n| (n.as_str(), 6_000)).collect();
    let dir = scope("budget-many", &files);
    let first = callers_of_foo(&dir);
    assert_eq!(first["stopped_at_budget"], true);
    assert_eq!(first["files_searched"], 17);
    assert_eq!(first["total"], 17 * 6_000);
    assert_eq!(
        note(&first),
        "[the search stopped at its budget of 200000 entries and uses: the 23 files after f16.lisp were not searched; search a smaller path or use --kinds defun,defmacro]"
    );
    for _ in 0..3 {
        assert_eq!(callers_of_foo(&dir), first);
    }
}

#[test]
fn a_budget_spent_by_the_last_file_searched_whole_left_nothing_out() {
    let names: Vec<String> = (0..17).map(|i| format!("f{i:02}.lisp")).collect();
    let files: Vec<(&str, usize)> = names.iter().map(|n| (n.as_str(), 6_000)).collect();
    let result = callers_of_foo(&scope("budget-last", &files));
    assert_eq!(result["stopped_at_budget"], false);
    assert_eq!(result["files_searched"], 17);
    assert_eq!(result["total"], 17 * 6_000);
    assert_eq!(note(&result), "");
}

#[test]
fn a_file_that_spends_the_budget_alone_is_cut_and_the_files_after_it_are_left_out() {
    // b.lisp (over the size cap, searched after the others) collects past the budget by
    // itself: c.lisp, searched before it, is left out all the same.
    let files = [("a.lisp", 10), ("b.lisp", 110_000), ("c.lisp", 10)];
    let result = callers_of_foo(&scope("budget-alone", &files));
    assert_eq!(result["stopped_at_budget"], true);
    assert_eq!(result["files_searched"], 2);
    assert_eq!(result["total"], 10 + 100_000);
    assert_eq!(
        note(&result),
        "[the search stopped at its budget of 200000 entries and uses: the rest of b.lisp and the file after it were not searched; search a smaller path or use --kinds defun,defmacro]"
    );
}

#[test]
fn a_form_with_more_uses_than_the_budget_is_answered_with_its_uses_cut() {
    // One definition calling foo 250,000 times: past the budget alone, it is still the
    // answer (one entry, 199,999 uses), and the note says the search stopped in it.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("budget-one-form");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let body = "(foo) ".repeat(250_000);
    std::fs::write(
        dir.join("a.lisp"),
        format!("(defun g ()\n {body})\n(defun h () (foo))\n"),
    )
    .unwrap();
    for mode in ["--callers", "--symbol"] {
        let result = find_foo(&dir, mode);
        assert_eq!(result["stopped_at_budget"], true, "{mode}");
        assert_eq!(result["total"], 1, "{mode}");
        let entries = result[if mode == "--callers" {
            "callers"
        } else {
            "references"
        }]
        .as_array()
        .unwrap();
        assert_eq!(entries[0]["name"], "g", "{mode}");
        let uses = &entries[0][if mode == "--callers" { "calls" } else { "uses" }];
        assert_eq!(uses.as_array().unwrap().len(), 199_999, "{mode}");
        assert!(
            note(&result).contains("the rest of a.lisp"),
            "{mode}: {}",
            note(&result)
        );
    }
}
