//! `--matches-only` with `--limit`: the `in-package` line shown before a match is context
//! and does not count against the limit (docs/views.md#only-the-matches), so a cut note's
//! count is the match's own lines and `--limit 2` shows a two-line definition whole.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn run(args: &[&str]) -> String {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(ROOT)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_package_line_does_not_count_against_the_limit() {
    let shown = run(&[
        "--matches-only",
        "-n",
        "^area$",
        "--limit",
        "2",
        "fixtures/demo/demo.lisp",
    ]);
    assert!(
        shown.contains(
            " 6: (in-package #:demo)\n16: (defgeneric area (shape)\n17:   (:documentation \"Area of SHAPE.\"))\n"
        ),
        "{shown}"
    );
    assert!(!shown.contains("cut after"), "{shown}");
    // A cut match: the note counts the lines of the match that were shown.
    let cut = run(&[
        "--matches-only",
        "-n",
        "^area$",
        "--limit",
        "1",
        "fixtures/demo/demo.lisp",
    ]);
    assert!(cut.contains(" 6: (in-package #:demo)\n16: (defgeneric area (shape)\n[Form at line 16 cut after 1 lines"), "{cut}");
}
