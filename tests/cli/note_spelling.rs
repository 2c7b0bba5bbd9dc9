//! The parameters a view's notes name are spelled as the command line takes them
//! (`--name-pattern`, `--raw`), not as MCP arguments (`name_pattern`, `collapsed=false`),
//! so that a note read on the command line says what to type there (docs/tool.md#hints).

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn run(args: &[&str]) -> String {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(ROOT)
        .output()
        .unwrap();
    // A pattern that matches nothing exits 1, as grep does; the view is printed all the same.
    assert!(matches!(out.status.code(), Some(0 | 1)), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn assert_no_mcp_spelling(shown: &str) {
    for mcp in [
        "name_pattern",
        "content_pattern",
        "collapsed=false",
        "offset=",
    ] {
        assert!(!shown.contains(mcp), "{mcp} in:\n{shown}");
    }
}

#[test]
fn notes_of_the_collapsed_view_name_flags() {
    let shown = run(&["-n", "nosuch", "-c", "nosuch", "fixtures/demo/demo.lisp"]);
    assert!(
        shown.starts_with(
            "[No definition matched --name-pattern \"nosuch\".]\n[No form matched --content-pattern \"nosuch\".]\n"
        ),
        "{shown}"
    );
    let outside = run(&["-n", "area", "--limit", "3", "fixtures/demo/demo.lisp"]);
    assert!(
        outside.contains("[--name-pattern also matches 2 forms after this window"),
        "{outside}"
    );
    assert_no_mcp_spelling(&shown);
    assert_no_mcp_spelling(&outside);
}

#[test]
fn notes_of_the_raw_view_name_flags() {
    let shown = run(&[
        "--raw",
        "-n",
        "area",
        "--kinds",
        "defun",
        "fixtures/demo/demo.lisp",
    ]);
    assert!(
        shown.contains(
            "[--name-pattern and --content-pattern apply to the collapsed view; --raw shows raw lines.]\n[--kinds and --features apply to the collapsed view; --raw shows raw lines.]\n"
        ),
        "{shown}"
    );
    assert_no_mcp_spelling(&shown);
}

#[test]
fn the_text_view_names_flags() {
    // No match exits 1 (as grep does): the note is still printed.
    let out = Command::new(BIN)
        .args(["-c", "no-such-text", "fixtures/docs/notes.txt"])
        .current_dir(ROOT)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let shown = String::from_utf8(out.stdout).unwrap();
    assert!(
        shown.contains("[No line matched --content-pattern \"no-such-text\".]"),
        "{shown}"
    );
}

#[test]
fn the_note_of_a_map_over_its_budget_names_flags() {
    let shown = run(&["--limit", "3", "fixtures"]);
    assert!(
        shown.contains("over the budget of 3 lines (--limit). Narrow it: read a subdirectory or one file, pass --kinds defun,defmacro or a --name-pattern, or raise --limit.]"),
        "{shown}"
    );
    assert_no_mcp_spelling(&shown);
}
