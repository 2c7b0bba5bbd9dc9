//! Snapshot tests of the views (docs/views.md) through the library entry point `tool::read`,
//! with a guard confined to `fixtures/` (so every path below is relative to it).
//!
//! Each case is one named snapshot `tests/views/snapshots/views__views__<name>.snap` holding the exact
//! `content` string followed by one line: the `meta` object as compact JSON without
//! `mtime_ms` (which depends on the checkout) and `applied_strategy` (always the default).
//!
//! To write new or changed snapshots: `INSTA_UPDATE=always cargo test --test views`
//! (or `cargo insta test --accept`), then read every changed snapshot against docs/views.md and
//! its fixture before committing: a snapshot is an assertion, not a recording.

use lisp_read_file::grammar::Grammar;
use lisp_read_file::guard::{Guard, DEFAULT_MAX_FILE_BYTES};
use lisp_read_file::tool::{self, ReadRequest, ReadResult};
use lisp_read_file::view::{Comments, Mode};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn fixtures_dir() -> PathBuf {
    Path::new(ROOT).join("fixtures")
}

fn guard() -> Guard {
    Guard::confined(&[fixtures_dir()], DEFAULT_MAX_FILE_BYTES).expect("fixtures/ is a directory")
}

/// Reads `path` (relative to `fixtures/`) with the defaults changed by `edit`.
fn read(path: &str, edit: impl FnOnce(&mut ReadRequest)) -> ReadResult {
    let mut request = ReadRequest::new(path);
    edit(&mut request);
    // An .asd path gives the project map (docs/project.md, tests/project/project.rs); these cases
    // are about the file's own view, which the loaded bytes give.
    let result = if path.ends_with(".asd") {
        let file = guard().read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        tool::read_loaded(file, &Grammar::builtin(), &request, None)
    } else {
        tool::read(&guard(), &Grammar::builtin(), &request)
    }
    .unwrap_or_else(|e| panic!("{path}: {e}"));
    check_invariants(path, &result);
    result
}

/// What holds for every view, whatever the snapshot says.
fn check_invariants(path: &str, r: &ReadResult) {
    assert_eq!(r.path, path, "the path is relative to the root, as given");
    assert!(
        r.content.is_empty() || r.content.ends_with('\n'),
        "{path}: every line of the content ends with a newline: {:?}",
        r.content
    );
    // insta folds CRLF in snapshots, so check here that no CR leaks from the source.
    assert!(
        !r.content.contains('\r'),
        "{path}: a carriage return leaked into the view: {:?}",
        r.content
    );
    assert!(
        !r.content.contains('\u{feff}'),
        "{path}: a byte-order mark leaked into the view"
    );
    assert_eq!(
        r.meta.truncated,
        r.meta.next_offset.is_some() || !r.meta.cut_lines.is_empty(),
        "{path}: truncated iff there is a next_offset or a cut line"
    );
}

/// The snapshot text: the content, then the meta as compact JSON without `mtime_ms`.
fn rendered(r: &ReadResult) -> String {
    let mut meta = serde_json::to_value(&r.meta).expect("meta serializes");
    let object = meta.as_object_mut().expect("meta is an object");
    object.remove("mtime_ms");
    // Every case here reads with the default strategy (tests/views/strategies.rs has the others).
    assert_eq!(
        object.remove("applied_strategy"),
        Some(serde_json::json!({"type": "default"}))
    );
    format!("{}{}\n", r.content, serde_json::to_string(&meta).unwrap())
}

/// Reads and compares with the named snapshot; returns the result for further checks.
fn case(name: &str, path: &str, edit: impl FnOnce(&mut ReadRequest)) -> ReadResult {
    let result = read(path, edit);
    let mut settings = insta::Settings::clone_current();
    settings.set_input_file(fixtures_dir().join(path));
    settings.set_omit_expression(true);
    settings.set_info(&path);
    settings.bind(|| insta::assert_snapshot!(name, rendered(&result)));
    result
}

fn pattern(p: &str) -> Option<String> {
    Some(p.to_string())
}

// ---------------------------------------------------------------------------------------
// Collapsed view of every definer fixture

/// The files of `fixtures/definers/`, sorted.
fn definer_fixtures() -> Vec<String> {
    let dir = fixtures_dir().join("definers");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {}", dir.display());
    files
}

#[test]
fn collapsed_view_of_every_definer_fixture() {
    let mut failed = Vec::new();
    for file in definer_fixtures() {
        let path = format!("definers/{file}");
        let name = format!("collapsed__{}", file.strip_suffix(".lisp").unwrap_or(&file));
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let r = case(&name, &path, |_| {});
            assert_eq!(r.mode, Mode::LispCollapsed, "{path}");
            assert_eq!(r.meta.expanded_forms, 0, "{path}");
            assert!(!r.meta.truncated, "{path}");
        }));
        if outcome.is_err() {
            failed.push(format!("{path} (views__{name}.snap)"));
        }
    }
    assert!(
        failed.is_empty(),
        "{} collapsed view(s) differ from their snapshots:\n  {}",
        failed.len(),
        failed.join("\n  ")
    );
}

#[test]
fn collapsed_demo() {
    let r = case("collapsed__demo", "demo/demo.lisp", |_| {});
    assert_eq!(r.meta.total_forms, 9);
}

/// docs/views.md#kinds-and-features: only the operators asked for, containers with their
/// matching children; forms `#+`/`#-` exclude hidden; each counted in one note.
#[test]
fn kinds_and_features() {
    let file = "views/kinds_features.lisp";
    let list = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    case("kinds__defmethod", file, |r| r.kinds = list(&["defmethod"]));
    case("kinds__defun_defclass", file, |r| {
        r.kinds = list(&["defun", "DEFCLASS"])
    });
    case("features__sbcl", file, |r| {
        r.features = list(&["sbcl", "x86-64", "unix"])
    });
    case("features__ccl", file, |r| r.features = list(&["ccl"]));
    let r = case("kinds_features__paged", file, |r| {
        r.kinds = list(&["cl:defun"]);
        r.features = list(&["sbcl"]);
        r.limit = 4;
    });
    let next = r.meta.next_offset.expect("a second page");
    case("kinds_features__paged_next", file, |r| {
        r.kinds = list(&["cl:defun"]);
        r.features = list(&["sbcl"]);
        r.limit = 4;
        r.offset = next;
    });
    let r = case("kinds__with_name_pattern", file, |r| {
        r.kinds = list(&["defmethod"]);
        r.name_pattern = pattern("area");
    });
    assert_eq!(r.meta.expanded_forms, 3);
}

/// docs/views.md#collapsed-view: signatures are source text, case kept (a regression test: keyword options
/// were once lower-cased, `(ASDF:DEFSYSTEM "LOUD" :depends-on ("QUIET"))`).
#[test]
fn signature_keywords_keep_their_case() {
    let r = read("definers/upper-case.lisp", |_| {});
    assert!(
        r.content
            .contains("18: (ASDF:DEFSYSTEM \"LOUD\" :DEPENDS-ON (\"QUIET\"))\n"),
        "{}",
        r.content
    );
}

// ---------------------------------------------------------------------------------------
// Expanded forms (docs/views.md#expanded-forms)

#[test]
fn expanded_by_name_pattern() {
    let r = case("name__fast_path", "demo/demo.lisp", |r| {
        r.name_pattern = pattern("FAST-path")
    });
    assert_eq!(r.meta.expanded_forms, 1, "name_pattern is case-insensitive");
    // Every area: the generic function and its methods, by name.
    let r = case("name__area_all", "definers/generic.lisp", |r| {
        r.name_pattern = pattern("^area$")
    });
    assert_eq!(r.meta.expanded_forms, 4);
    // A setf function name as written.
    case("name__setf_function", "definers/functions.lisp", |r| {
        r.name_pattern = pattern(r"^\(setf shape-size\)$")
    });
}

#[test]
fn expanded_method_by_qualifiers_and_specializers() {
    let r = case("name__method_before_circle", "definers/generic.lisp", |r| {
        r.name_pattern = pattern(r"area :before \(circle\)")
    });
    assert_eq!(r.meta.expanded_forms, 1);
    let r = case("name__setf_method_after", "definers/generic.lisp", |r| {
        r.name_pattern = pattern(r"^\(setf size\) :after \(t circle\)$")
    });
    assert_eq!(r.meta.expanded_forms, 1);
    let r = case(
        "name__method_eql_specializer",
        "definers/generic.lisp",
        |r| r.name_pattern = pattern(r"^combine progn \(widget \(eql :default\)\)$"),
    );
    assert_eq!(r.meta.expanded_forms, 1);
}

#[test]
fn methods_match_as_printed_without_escaping() {
    // The README's example: `(shape)` is a regex group, and also literal text.
    let r = case("name__method_as_printed", "demo/demo.lisp", |r| {
        r.name_pattern = pattern("area :around (shape)")
    });
    assert_eq!(r.meta.expanded_forms, 1);
    assert!(r
        .content
        .contains("22: (defmethod area :around ((s shape))\n23:"));
    // Not a valid regex: literal text only, not an error.
    let r = read("demo/demo.lisp", |r| r.name_pattern = pattern("*count*"));
    assert_eq!(r.meta.expanded_forms, 1);
    assert!(
        r.content.contains(" 8: (defvar *count* 0\n"),
        "{}",
        r.content
    );
}

#[test]
fn matches_outside_the_window_are_announced() {
    let r = case("name__matches_after_window", "demo/demo.lisp", |r| {
        r.name_pattern = pattern("area");
        r.limit = 3;
    });
    // The page from offset 0 held no match: the window starts at the first one.
    assert_eq!(r.meta.expanded_forms, 1);
    let r = case("name__matches_before_window", "demo/demo.lisp", |r| {
        r.name_pattern = pattern("area|with-shape");
        r.offset = 20;
        r.limit = 3;
    });
    assert_eq!(r.meta.expanded_forms, 1);
}

#[test]
fn expanded_container_child_alone() {
    // By name: one child of `let` expands, its container stays collapsed around it.
    let r = case("name__container_child", "definers/containers.lisp", |r| {
        r.name_pattern = pattern("^next-id$")
    });
    assert_eq!(r.meta.expanded_forms, 1);
    // Deep inside nested containers.
    let r = case("name__nested_child", "definers/nesting.lisp", |r| {
        r.name_pattern = pattern("^unsafe$")
    });
    assert_eq!(r.meta.expanded_forms, 1);
    // By content: only the child whose text matches.
    let r = case(
        "content__container_child",
        "definers/containers.lisp",
        |r| r.content_pattern = pattern(r"incf counter"),
    );
    assert_eq!(r.meta.expanded_forms, 1);
    // By content, matching the container's own text and no child: the whole container.
    let r = case(
        "content__container_whole",
        "definers/containers.lisp",
        |r| r.content_pattern = pattern(r"\(counter 0\)"),
    );
    assert_eq!(r.meta.expanded_forms, 1);
}

#[test]
fn expanded_by_content_pattern() {
    let r = case("content__call_next_method", "demo/demo.lisp", |r| {
        r.content_pattern = pattern("call-next-method")
    });
    assert_eq!(r.meta.expanded_forms, 1);
    // Comments inside a form are part of its text, and shown verbatim.
    let r = case("content__comment_inside", "views/commented.lisp", |r| {
        r.content_pattern = pattern("inline block comment|only when the form is expanded")
    });
    assert_eq!(r.meta.expanded_forms, 2);
    // content_pattern is case-sensitive (only name_pattern folds case).
    let r = case("content__case_sensitive", "demo/demo.lisp", |r| {
        r.content_pattern = pattern("CALL-NEXT-METHOD")
    });
    assert_eq!(r.meta.expanded_forms, 0);
    // Both patterns: a form matching either expands.
    let r = case("name_and_content", "demo/demo.lisp", |r| {
        r.name_pattern = pattern("^with-shape$");
        r.content_pattern = pattern("truly-the");
    });
    assert_eq!(r.meta.expanded_forms, 2);
}

#[test]
fn patterns_that_match_nothing() {
    let r = case("nomatch__name", "demo/demo.lisp", |r| {
        r.name_pattern = pattern("nothing-like-this")
    });
    assert!(r
        .content
        .starts_with("[No definition matched name_pattern \"nothing-like-this\".]\n"));
    let r = case("nomatch__content", "demo/demo.lisp", |r| {
        r.content_pattern = pattern("zzz")
    });
    assert!(r
        .content
        .starts_with("[No form matched content_pattern \"zzz\".]\n"));
    let r = case("nomatch__text", "views/notes.md", |r| {
        r.content_pattern = pattern("FIXME")
    });
    assert_eq!(r.mode, Mode::TextFiltered);
}

// ---------------------------------------------------------------------------------------
// Comments (docs/views.md#collapsed-view)

#[test]
fn comment_modes() {
    for (name, comments) in [
        ("comments__none", Comments::None),
        ("comments__headers", Comments::Headers),
        ("comments__preceding", Comments::Preceding),
        ("comments__all", Comments::All),
    ] {
        case(name, "views/commented.lisp", |r| r.comments = comments);
    }
}

// ---------------------------------------------------------------------------------------
// Raw (docs/views.md#raw-view)

#[test]
fn raw_mode() {
    let r = case("raw__demo", "demo/demo.lisp", |r| r.collapsed = false);
    assert_eq!(r.mode, Mode::Raw);
    case("raw__line_numbers", "demo/demo.lisp", |r| {
        r.collapsed = false;
        r.line_numbers = true;
    });
    let r = case("raw__offset_limit", "demo/demo.lisp", |r| {
        r.collapsed = false;
        r.offset = 10;
        r.limit = 5;
    });
    assert_eq!(r.meta.next_offset, Some(15));
    let r = case("raw__offset_limit_numbered", "demo/demo.lisp", |r| {
        r.collapsed = false;
        r.offset = 30;
        r.limit = 5;
        r.line_numbers = true;
    });
    assert!(!r.meta.truncated, "the window reaches the last line");
    let r = case("raw__offset_past_end", "demo/demo.lisp", |r| {
        r.collapsed = false;
        r.offset = 100;
    });
    assert_eq!(r.content, "[Offset 100 is past end of file (35 lines).]\n");
    // Patterns do not apply to the raw view of a Lisp file, and the view says so.
    case("raw__with_pattern", "demo/demo.lisp", |r| {
        r.collapsed = false;
        r.limit = 3;
        r.name_pattern = pattern("area");
    });
}

// ---------------------------------------------------------------------------------------
// Text files (docs/views.md#raw-view, docs/views.md#text-filtered-view)

#[test]
fn markdown_without_pattern_is_raw() {
    let r = case("text__raw", "views/notes.md", |_| {});
    assert_eq!(r.mode, Mode::Raw);
    assert_eq!(r.meta.total_forms, 0);
    case("text__raw_window", "views/notes.md", |r| {
        r.offset = 20;
        r.limit = 2;
        r.line_numbers = true;
    });
}

#[test]
fn text_filtered() {
    // Default context (5): lines 1-13 in one block, `--`, lines 19-24.
    let r = case("text__grep_context_default", "views/notes.md", |r| {
        r.content_pattern = pattern("TODO")
    });
    assert_eq!(r.mode, Mode::TextFiltered);
    // Context 2: overlapping blocks merged.
    case("text__grep_context_2", "views/notes.md", |r| {
        r.content_pattern = pattern("TODO");
        r.context_lines = 2;
    });
    // Context 1: blocks that touch are merged without `--`, as grep does.
    case("text__grep_context_1", "views/notes.md", |r| {
        r.content_pattern = pattern("TODO");
        r.context_lines = 1;
    });
    // Context 0: matching lines only, each gap marked.
    case("text__grep_context_0", "views/notes.md", |r| {
        r.content_pattern = pattern("TODO");
        r.context_lines = 0;
    });
    // name_pattern on a text file greps too, case-insensitively.
    case("text__grep_name_pattern", "views/notes.md", |r| {
        r.name_pattern = pattern("todo");
        r.context_lines = 1;
    });
    // Cut by limit, with the footer naming the offset to continue.
    let r = case("text__grep_limit", "views/notes.md", |r| {
        r.content_pattern = pattern("TODO");
        r.context_lines = 1;
        r.limit = 4;
    });
    assert!(r.meta.truncated);
    let next = r.meta.next_offset.expect("next offset");
    case("text__grep_limit_continued", "views/notes.md", |r| {
        r.content_pattern = pattern("TODO");
        r.context_lines = 1;
        r.limit = 4;
        r.offset = next;
    });
}

// ---------------------------------------------------------------------------------------
// System and script files

#[test]
fn asd_and_ros_files() {
    let r = case("asd__expanded", "definers/system.asd", |r| {
        r.name_pattern = pattern("shapes/tests")
    });
    assert_eq!(r.mode, Mode::LispCollapsed);
    assert_eq!(r.meta.expanded_forms, 1);
    let r = case("ros__collapsed", "views/script.ros", |_| {});
    assert_eq!(r.mode, Mode::LispCollapsed);
    assert!(r.content.starts_with(" 1: #!/bin/sh\n"), "{}", r.content);
    case("ros__expanded", "views/script.ros", |r| {
        r.name_pattern = pattern("^main$")
    });
}

// ---------------------------------------------------------------------------------------
// Tolerance and encodings (docs/reader.md, docs/guard.md)

#[test]
fn unbalanced_file_shows_recovered_regions() {
    let r = case("unbalanced__collapsed", "views/unbalanced.lisp", |_| {});
    assert!(r
        .content
        .contains("[Unclosed form at line 2; recovered at line 6.]"));
    assert!(!r.meta.diagnostics.is_empty());
    // A balanced form expanded next to a stray paren: the note follows the form.
    let r = case("unbalanced__expanded_stray", "views/unbalanced.lisp", |r| {
        r.name_pattern = pattern("^extra-close$")
    });
    assert_eq!(r.meta.expanded_forms, 1);
}

#[test]
fn long_lines_are_cut() {
    let r = case("long_line__collapsed", "views/long-line.lisp", |_| {});
    assert!(r.content.contains("…[+"), "{}", r.content);
    let r = case("long_line__raw", "views/long-line.lisp", |r| {
        r.collapsed = false;
        r.line_numbers = true;
    });
    // 450 arguments of 5 characters and a space each, plus the head and the bracket.
    let long = "(defun many-arguments (".len() + 450 * 6 - 1 + 1;
    // The rest of the cut line is named as a byte range: the line starts at byte 57.
    let cut = format!(
        "…[+{} chars; the rest is {{\"type\":\"byteRange\",\"start\":{},\"end\":{}}}]\n",
        long - 2000,
        57 + 2000,
        57 + long
    );
    assert!(r.content.contains(&cut), "{cut:?} in {}", r.content);
    assert!(r.meta.truncated, "a cut line is a truncated view");
    assert_eq!(r.meta.cut_lines.len(), 1);
    assert_eq!(
        (r.meta.cut_lines[0].line, r.meta.cut_lines[0].start),
        (2, 57 + 2000)
    );
    case("long_line__expanded", "views/long-line.lisp", |r| {
        r.name_pattern = pattern("many-arguments")
    });
}

#[test]
fn crlf_line_endings() {
    case("crlf__collapsed", "views/crlf.lisp", |_| {});
    let r = case("crlf__expanded", "views/crlf.lisp", |r| {
        r.name_pattern = pattern("crlf-one")
    });
    assert!(r
        .content
        .contains("2: (defun crlf-one (x)\n3:   \"Doubles X.\"\n"));
    let r = case("crlf__raw", "views/crlf.lisp", |r| {
        r.collapsed = false;
        r.line_numbers = true;
    });
    assert_eq!(r.meta.total_lines, Some(6));
    case("crlf__comments_all", "views/crlf.lisp", |r| {
        r.comments = Comments::All
    });
}

#[test]
fn byte_order_mark_is_skipped() {
    let r = case("bom__collapsed", "views/bom.lisp", |_| {});
    assert!(r.content.starts_with("1: (defun bom-first (x) ...)"));
    let r = case("bom__expanded", "views/bom.lisp", |r| {
        r.name_pattern = pattern("bom-first")
    });
    assert!(r.content.starts_with("1: (defun bom-first (x)\n"));
    let r = case("bom__raw", "views/bom.lisp", |r| r.collapsed = false);
    assert!(r.content.starts_with("(defun bom-first (x)\n"));
    let r = case("bom__comment_headers", "views/bom-comment.lisp", |r| {
        r.comments = Comments::Headers
    });
    assert!(r.content.starts_with("1: ;;;; A header"), "{}", r.content);
}

#[test]
fn invalid_utf8_is_replaced_and_reported() {
    let r = case("invalid_utf8__collapsed", "views/invalid-utf8.lisp", |_| {});
    assert_eq!(r.meta.fallback_encoding.as_deref(), Some("replace"));
    assert!(r.content.contains('\u{fffd}'));
    let r = case("invalid_utf8__raw", "views/invalid-utf8.lisp", |r| {
        r.collapsed = false
    });
    assert_eq!(r.meta.fallback_encoding.as_deref(), Some("replace"));
    // Valid files do not carry the field at all.
    let r = read("demo/demo.lisp", |_| {});
    assert_eq!(r.meta.fallback_encoding, None);
    let json = serde_json::to_value(&r.meta).unwrap();
    assert!(json.get("fallback_encoding").is_none(), "{json}");
}

#[test]
fn empty_file() {
    let r = case("empty__collapsed", "views/empty.lisp", |_| {});
    assert_eq!((r.content.as_str(), r.meta.total_lines), ("", Some(0)));
    let r = case("empty__raw", "views/empty.lisp", |r| r.collapsed = false);
    assert_eq!((r.content.as_str(), r.meta.total_lines), ("", Some(0)));
}

// ---------------------------------------------------------------------------------------
// Paging the collapsed view (docs/views.md#paging)

#[test]
fn collapsed_paging() {
    let first = case("paging__first", "definers/functions.lisp", |r| r.limit = 3);
    assert!(first.meta.truncated);
    let next = first.meta.next_offset.expect("a next offset");
    let second = case("paging__second", "definers/functions.lisp", |r| {
        r.limit = 3;
        r.offset = next;
    });
    let next = second.meta.next_offset.expect("a next offset");
    let last = case("paging__last", "definers/functions.lisp", |r| {
        r.limit = 3;
        r.offset = next;
    });
    assert!(!last.meta.truncated);
    // The pages together are the whole view, without the footers.
    let whole = read("definers/functions.lisp", |_| {}).content;
    let strip = |c: &str| -> String {
        c.lines()
            .filter(|l| !l.starts_with("[Showing"))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    assert_eq!(
        format!(
            "{}{}{}",
            strip(&first.content),
            strip(&second.content),
            strip(&last.content)
        ),
        whole
    );
    // An expanded form longer than the whole budget is cut, and the footer says how to go on.
    let r = case("paging__form_cut", "definers/functions.lisp", |r| {
        r.name_pattern = pattern("^with-shape$");
        r.offset = 16;
        r.limit = 2;
    });
    assert!(r.meta.truncated);
}

// ---------------------------------------------------------------------------------------
// Regressions for bugs found in review: each test states the expected behaviour.

/// An item that runs to the end of the file (an unclosed list, an unterminated string or
/// `#|`) ends with the file's last newline; shown verbatim it must not gain a phantom empty
/// line numbered past the end. Today a 13-line file shows `14: `.
#[test]
fn expanded_unclosed_form_has_no_phantom_line() {
    let r = read("views/unbalanced.lisp", |r| {
        r.name_pattern = pattern("^broken$|^half-written$")
    });
    assert_eq!(
        r.content,
        " 2: (defun broken (x)
 3:   (let ((y (1+ x)))
 4:     (print y)
[Unclosed form at line 2; recovered at line 6.]
 6: (defun fine () t)
 8: (defun extra-close () t)
[Unmatched ) at line 8.]
10: (defvar *after* 1)
12: (defun half-written (x
13:   (if x
[Unclosed form at line 12; it runs to the end of the file.]
"
    );
    // The same for an unterminated `#|` shown by comments=all: today `5: ` in a 4-line file.
    let r = read("views/unterminated-comment.lisp", |r| {
        r.comments = Comments::All
    });
    assert!(
        r.content.ends_with(
            "4:   (defun swallowed () 2)\n[Unterminated #| comment at line 3; it runs to the end of the file.]\n"
        ),
        "{}",
        r.content
    );
    assert!(!r.content.contains("5: "), "{}", r.content);
}

/// docs/views.md#collapsed-view "nothing is lost silently": a top-level `#|` that never closes hides the rest
/// of the file; the view must say so, as it does for an unclosed form. Once the
/// diagnostic was only in `meta` and the view showed just `1: (defun before-the-comment () ...)`.
#[test]
fn unterminated_block_comment_is_visible() {
    let r = read("views/unterminated-comment.lisp", |_| {});
    assert_eq!(r.meta.diagnostics.len(), 1);
    assert!(
        r.content
            .contains("[Unterminated #| comment at line 3; it runs to the end of the file.]\n"),
        "{}",
        r.content
    );
}

/// docs/reader.md#runaway-strings-and-comments: the same comment before a line that
/// starts with `(` ends there, and the definition on that line is shown.
#[test]
fn unterminated_block_comment_before_a_definition_recovers() {
    let r = read("views/runaway-comment.lisp", |_| {});
    assert!(
        r.content.contains(
            "[Unterminated #| comment at line 3; recovered at line 4.]\n4: (defun after ()"
        ),
        "{}",
        r.content
    );
}

/// docs/views.md#collapsed-view "nothing is lost silently": an offset past the last form gives an empty
/// collapsed view today, where raw mode says `[Offset K is past end of file (N lines).]`.
#[test]
fn collapsed_offset_past_end_says_so() {
    for offset in [30, 500] {
        let r = read("definers/functions.lisp", |r| r.offset = offset);
        assert!(
            !r.content.is_empty(),
            "offset {offset}: the view should say that no form starts there"
        );
    }
}

/// docs/views.md#collapsed-view: a container of more children than it lists says where
/// the others start (the outline keeps at most outline::MAX_CHILDREN of them).
#[test]
fn a_container_past_its_listed_children_says_where_the_rest_starts() {
    let n = lisp_read_file::outline::MAX_CHILDREN;
    let text = format!("(progn\n{})\n", "(defun f ())\n".repeat(n + 2));
    let source = lisp_read_file::source::Source::new(text.as_bytes());
    let grammar = Grammar::builtin();
    let outline = lisp_read_file::outline::outline_bytes(text.as_bytes(), &grammar);
    let options = lisp_read_file::view::ViewOptions {
        limit: n + 10,
        ..Default::default()
    };
    let view = lisp_read_file::view::render(&source, Some(&outline), &options);
    let expected = format!(
        "[More forms inside, from line {}, are not listed: a container lists at most {n}. Read them with collapsed=false offset={}.]\n",
        n + 2,
        n + 1
    );
    assert!(
        view.content.ends_with(&expected),
        "{}",
        &view.content[view.content.len() - 300..]
    );
}
