//! Focused reads (docs/views.md#only-the-matches): `matches_only` shows only the matching
//! forms of one file, with the `in-package` in effect, as a directory's map does; the
//! first page of a pattern view always holds the first match; `content_pattern` takes
//! literal text as `name_pattern` does. Through the library and the real binary.

use lisp_read_file::grammar::Grammar;
use lisp_read_file::guard::{Guard, DEFAULT_MAX_FILE_BYTES};
use lisp_read_file::tool::{self, ReadRequest, ReadResult};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");

/// A directory with `api.lisp`: a package, 300 filler definitions, the definition we
/// want, another package and a second match.
fn project(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lrf-focused-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let mut text = String::from(";;;; api\n(in-package :first)\n\n");
    for k in 0..300 {
        text.push_str(&format!("(defun filler-{k} (x)\n  (list x {k}))\n\n"));
    }
    text.push_str(
        "(defun wanted (a b)\n  \"Doc.\"\n  (handler-case (+ a b)\n    (error () nil)))\n\n",
    );
    text.push_str("(in-package :second)\n\n(defun wanted-too ()\n  (handler-case 1))\n");
    fs::write(dir.join("api.lisp"), text).unwrap();
    fs::canonicalize(&dir).unwrap()
}

fn read(dir: &Path, edit: impl FnOnce(&mut ReadRequest)) -> ReadResult {
    let guard = Guard::confined(&[dir.to_path_buf()], DEFAULT_MAX_FILE_BYTES).unwrap();
    let mut request = ReadRequest::new("api.lisp");
    edit(&mut request);
    tool::read(&guard, &Grammar::builtin(), &request).unwrap()
}

#[test]
fn matches_only_shows_the_matches_with_their_package() {
    let dir = project("only");
    let r = read(&dir, |r| {
        r.name_pattern = Some("^wanted$".into());
        r.matches_only = true;
    });
    assert_eq!(
        r.content,
        "  2: (in-package :first)\n\
         904: (defun wanted (a b)\n\
         905:   \"Doc.\"\n\
         906:   (handler-case (+ a b)\n\
         907:     (error () nil)))\n"
    );
    assert_eq!(r.meta.expanded_forms, 1);
    // Each match with the package it is read in; the same format as a directory's map.
    let both = read(&dir, |r| {
        r.name_pattern = Some("^wanted".into());
        r.matches_only = true;
    });
    assert!(both
        .content
        .contains("909: (in-package :second)\n911: (defun wanted-too ()"));
    let guard = Guard::confined(std::slice::from_ref(&dir), DEFAULT_MAX_FILE_BYTES).unwrap();
    let mut request = ReadRequest::new(".");
    request.name_pattern = Some("^wanted".into());
    let map = tool::read(&guard, &Grammar::builtin(), &request).unwrap();
    assert_eq!(map.content, format!("==> api.lisp <==\n{}", both.content));
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn matches_only_needs_a_pattern() {
    let dir = project("needs");
    let guard = Guard::confined(std::slice::from_ref(&dir), DEFAULT_MAX_FILE_BYTES).unwrap();
    let mut request = ReadRequest::new("api.lisp");
    request.matches_only = true;
    let e = tool::read(&guard, &Grammar::builtin(), &request).unwrap_err();
    assert!(e.message.contains("matches_only needs name_pattern"), "{e}");
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_first_page_of_a_pattern_view_holds_the_first_match() {
    let dir = project("first");
    for matches_only in [false, true] {
        let r = read(&dir, |r| {
            r.name_pattern = Some("^wanted$".into());
            r.limit = 5;
            r.matches_only = matches_only;
        });
        assert!(
            r.content.contains("904: (defun wanted (a b)"),
            "matches_only {matches_only}: {}",
            r.content
        );
        assert_eq!(r.meta.expanded_forms, 1, "{}", r.content);
    }
    // In context, the window starts at the match and says what it skipped.
    let r = read(&dir, |r| {
        r.name_pattern = Some("^wanted$".into());
        r.limit = 5;
    });
    assert!(
        r.content.starts_with("[This window starts at the first match, line 904: the forms from line 1 to line 903 are not shown"),
        "{}",
        r.content
    );
    // A page that already shows a match is not moved.
    let r = read(&dir, |r| r.name_pattern = Some("filler-1$".into()));
    assert!(!r.content.contains("This window starts"), "{}", r.content);
    assert!(r.content.starts_with("  2: (in-package :first)\n"));
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn content_pattern_takes_literal_text() {
    let dir = project("literal");
    let r = read(&dir, |r| {
        r.content_pattern = Some("(handler-case".into());
        r.matches_only = true;
    });
    assert_eq!(r.meta.expanded_forms, 2, "{}", r.content);
    // Case-sensitive still, and regexes keep their meaning.
    let r = read(&dir, |r| r.content_pattern = Some("(HANDLER-case".into()));
    assert_eq!(r.meta.expanded_forms, 0);
    let r = read(&dir, |r| {
        r.content_pattern = Some(r"handler-case \(\+".into())
    });
    assert_eq!(r.meta.expanded_forms, 1);
    // On the command line, as the issue typed it.
    let out = Command::new(BIN)
        .args(["-c", "(handler-case", "--matches-only"])
        .arg(dir.join("api.lisp"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("906:   (handler-case (+ a b)") && text.contains("912:   (handler-case 1))")
    );
    assert!(!text.contains("filler"), "{text}");
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn matches_only_inside_a_container_shows_its_head_and_the_match_alone() {
    let dir = std::env::temp_dir().join(format!("lrf-focused-{}-container", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("api.lisp"),
        "(in-package :p)\n(with-upgradability ()\n  (defun before (x) x)\n  (defvar *v* 1 \"Doc.\")\n  (defun wanted (a)\n    (list a))\n  (defun after () 2))\n",
    )
    .unwrap();
    let dir = fs::canonicalize(&dir).unwrap();
    let r = read(&dir, |r| {
        r.name_pattern = Some("^wanted$".into());
        r.matches_only = true;
    });
    assert_eq!(
        r.content,
        "1: (in-package :p)\n\
         2: (with-upgradability ()\n\
         5:   (defun wanted (a)\n\
         6:     (list a)))\n"
    );
    fs::remove_dir_all(dir).unwrap();
}
