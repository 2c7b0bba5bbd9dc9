//! File contents on a terminal (docs/guard.md#file-contents-on-a-terminal): when standard
//! output is a terminal, a carriage return, an ESC or a bidirectional control in a file
//! is shown escaped (`\r`, `\u{1b}`), so a file can neither forge a `==> PATH <==` line
//! nor drive the terminal; piped output and `--json` keep the bytes. The terminal is a
//! real pseudo-terminal, made by util-linux `script`.

use crate::common;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");

/// A project whose file forges a header with a CR and clears the screen with ESC.
fn hostile_project(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lrf-cli-terminal-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("x.lisp"),
        "(defun c (x) \"doc \x1b[2J\x1b[31mRED\rCR-overwrite\" 1)\n\
         (defun d\r==> forged.lisp <== (x) \u{202e}1)\n\
         (defun e (x)\n  \"\x1b]52;c;cHduZWQ=\x07\"\n  x)\n",
    )
    .unwrap();
    dir
}

/// Standard output of the binary run with `args` in `dir` on a pseudo-terminal, with
/// the terminal's own CR LF line ends made LF again; `None` when `script` is missing.
fn on_terminal(dir: &Path, args: &str) -> Option<String> {
    let present = Command::new("script").arg("--version").output().is_ok();
    if !common::tool_available(present, "util-linux `script`", "apt-get install bsdutils") {
        return None;
    }
    let out = Command::new("script")
        .args(["-qec", &format!("{BIN} {args}"), "/dev/null"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    Some(String::from_utf8(out.stdout).unwrap().replace("\r\n", "\n"))
}

fn assert_escaped(shown: &str) {
    assert!(
        !shown.contains('\x1b'),
        "a raw ESC reached the terminal: {shown:?}"
    );
    assert!(
        !shown.contains('\r'),
        "a raw CR reached the terminal: {shown:?}"
    );
    assert!(
        !shown.contains('\u{202e}'),
        "a raw bidi override: {shown:?}"
    );
}

#[test]
fn views_maps_and_find_escape_control_characters_on_a_terminal() {
    let dir = hostile_project("views");
    for args in [
        "x.lisp",
        ".",
        "-n . x.lisp",
        "--raw x.lisp",
        "find --name c --body .",
        "find --name-pattern . .",
    ] {
        let Some(shown) = on_terminal(&dir, args) else {
            return;
        };
        assert_escaped(&shown);
        // Signatures only: no ESC to show; the others show a docstring or a body.
        if !args.starts_with("find --name-pattern") {
            assert!(shown.contains("\\u{1b}"), "{args}: {shown}");
        }
    }
    let shown = on_terminal(&dir, "-n . x.lisp").unwrap();
    assert!(
        shown.contains("2: (defun d\\r==> forged.lisp <== (x) \\u{202e}1)"),
        "{shown}"
    );
    assert!(
        shown.contains("\"doc \\u{1b}[2J\\u{1b}[31mRED\\rCR-overwrite\""),
        "{shown}"
    );
    assert!(shown.contains("\\u{1b}]52;c;cHduZWQ=\\u{7}"), "{shown}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn piped_output_and_json_keep_the_bytes() {
    let dir = hostile_project("piped");
    let piped = Command::new(BIN)
        .args(["-n", ".", "x.lisp"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let piped = String::from_utf8(piped.stdout).unwrap();
    assert!(
        piped.contains("2: (defun d\r==> forged.lisp <== (x) \u{202e}1)"),
        "{piped:?}"
    );
    if let Some(json) = on_terminal(&dir, "--json -n . x.lisp") {
        let value: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
        let content = value["content"].as_str().unwrap();
        assert!(content.contains("(defun d\r==> forged.lisp"), "{content:?}");
    }
    let _ = std::fs::remove_dir_all(dir);
}
