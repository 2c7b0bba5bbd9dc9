use super::*;
use std::fs;
use std::path::PathBuf;

fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lrf-find-unit-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    for (path, text) in files {
        let path = dir.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    dir
}

fn run(dir: &PathBuf, edit: impl FnOnce(&mut FindRequest)) -> Result<FindResult, ToolError> {
    let guard = Guard::confined(std::slice::from_ref(dir), 1 << 20).unwrap();
    let mut request = FindRequest::new(".");
    edit(&mut request);
    find(&guard, &Grammar::builtin(), &request, &CancelToken::new())
}

/// `(line, column)` of every use of `symbol` in `text`.
/// The definitions `find` gives in `dir`, each as `LINE:KIND:NAME`, in the answer's order.
fn definitions(dir: &PathBuf, edit: impl FnOnce(&mut FindRequest)) -> Vec<String> {
    run(dir, edit)
        .unwrap()
        .definitions
        .unwrap()
        .into_iter()
        .map(|d| format!("{}:{}:{}", d.line, d.kind, d.name))
        .collect()
}

fn uses(text: &str, symbol: &str) -> Vec<(usize, usize)> {
    let dir = scratch(&format!("uses-{}", symbol.len()), &[("a.lisp", text)]);
    let result = run(&dir, |r| r.symbol = Some(symbol.into())).unwrap();
    // In file order (entries are grouped by package).
    let mut found: Vec<(usize, usize)> = result
        .references
        .unwrap()
        .iter()
        .flat_map(|r| r.uses.iter().map(|u| (u.line, u.column)))
        .collect();
    found.sort_unstable();
    found
}

#[test]
fn a_use_is_a_token_never_text_in_strings_or_comments() {
    let text =
        "(defun bar ()\n  \"foo in a string\" ; foo in a comment\n  #| foo |# #\\( (foo 1))\n";
    assert_eq!(uses(text, "foo"), [(3, 17)]);
    // Not a substring of a longer token.
    assert_eq!(uses("(foo-bar xfoo foo.x foo)", "foo"), [(1, 20)]);
    // Escaped, prefixed, quoted, backquoted, unquoted, function, keyword, uninterned.
    assert_eq!(
        uses(
            "(a |foo| pkg:foo pkg::foo #'foo 'foo `(foo ,foo ,@foo) :foo #:foo)",
            "foo"
        ),
        [
            (1, 3),
            (1, 9),
            (1, 17),
            (1, 28),
            (1, 33),
            (1, 39),
            (1, 44),
            (1, 50),
            (1, 55),
            (1, 60)
        ]
    );
    // Case-insensitive, either side.
    assert_eq!(uses("(FOO Foo foo)", "fOo"), [(1, 1), (1, 5), (1, 9)]);
    // Inside a form under #+/#-, but never the feature expression itself.
    assert_eq!(
        uses("#+foo (foo) #-(or foo sbcl) (x foo)", "foo"),
        [(1, 7), (1, 31)]
    );
    // A package given must be the token's (docs/find.md#packages): `foo` here is
    // COMMON-LISP-USER's, `b:foo` another package's.
    assert_eq!(uses("(a:foo b:foo foo)", "a:foo"), [(1, 1)]);
    assert_eq!(uses("(a:foo b:foo foo)", "cl-user::foo"), [(1, 13)]);
    // Columns are characters.
    assert_eq!(uses("(\"λλ\" foo)", "foo"), [(1, 6)]);
    assert_eq!(uses("(x \"foo\\\" foo\")", "foo"), []);
}

#[test]
fn references_group_by_top_level_form_and_mark_definitions() {
    let dir = scratch(
        "groups",
        &[
            (
                "b.lisp",
                "(defun foo (x)\n  (foo (1- x)))\n\n(defun bar ()\n  (foo 1)\n  (foo 2))\n",
            ),
            (
                "a.lisp",
                ";; foo\n(progn (defmacro foo ()))\n(defvar *x* 'foo)\n",
            ),
            ("c.txt", "(foo)"),
        ],
    );
    let result = run(&dir, |r| r.symbol = Some("FOO".into())).unwrap();
    assert_eq!(result.mode, FindMode::References);
    let refs = result.references.unwrap();
    let summary: Vec<(&str, usize, bool, usize)> = refs
        .iter()
        .map(|r| (r.file.as_str(), r.line, r.definition, r.uses.len()))
        .collect();
    assert_eq!(
        summary,
        [
            ("a.lisp", 2, true, 1),
            ("a.lisp", 3, false, 1),
            ("b.lisp", 1, true, 2),
            ("b.lisp", 4, false, 2)
        ]
    );
    assert_eq!(refs[3].kind, "defun");
    assert_eq!(refs[3].name.as_deref(), Some("bar"));
    assert_eq!(refs[3].uses[1].text, "  (foo 2))");
    assert_eq!(result.files_searched, 2);
    assert_eq!(result.total, 4);
    assert!(
        result
            .content
            .starts_with("==> a.lisp <==\n2: (progn (defmacro foo ()))  [definition]\n"),
        "{}",
        result.content
    );
    // Use lines lose their indentation (one space marks them); a form whose uses are all
    // on one line that shows its operator and name is that line alone; a definition's own
    // first line, which only names it, is not repeated under its heading.
    assert_eq!(
        result.content,
        "==> a.lisp <==\n2: (progn (defmacro foo ()))  [definition]\n3: (defvar *x* 'foo)\n==> b.lisp <==\n1: (defun foo ...)  [definition]\n 2: (foo (1- x)))\n4: (defun bar ...)\n 5: (foo 1)\n 6: (foo 2))\n"
    );
    // A whole answer's entries say what they are: no count line.
    assert!(!result.content.contains("searched]"), "{}", result.content);
    // kinds: only uses inside forms with these operators.
    let result = run(&dir, |r| {
        r.symbol = Some("foo".into());
        r.kinds = Some(vec!["defvar".into()]);
    })
    .unwrap();
    assert_eq!(result.total, 1);
}

#[test]
fn definitions_by_name_pattern_kinds_and_body() {
    let dir = scratch(
        "defs",
        &[(
            "src/a.lisp",
            "(defun make-foo (x) x)\n(defmacro make-bar () nil)\n(defmethod area :around ((s shape)) 1)\n(defun (setf foo) (v x) v)\n(progn\n  (defun pkg::make-baz () 2))\n",
        )],
    );
    let names = |edit: fn(&mut FindRequest)| -> Vec<String> {
        run(&dir, edit)
            .unwrap()
            .definitions
            .unwrap()
            .into_iter()
            .map(|d| format!("{}:{}:{}:{}", d.line, d.column, d.kind, d.name))
            .collect()
    };
    assert_eq!(
        names(|r| r.name_pattern = Some("^make-".into())),
        ["1:0:defun:make-foo", "2:0:defmacro:make-bar"]
    );
    assert_eq!(names(|r| r.name_pattern = Some("make-".into())).len(), 3);
    assert_eq!(
        names(|r| r.name = Some("MAKE-BAZ".into())),
        ["6:2:defun:pkg::make-baz"]
    );
    assert_eq!(
        names(|r| r.name = Some("other::make-baz".into())),
        Vec::<String>::new()
    );
    assert_eq!(
        names(|r| r.name = Some("(setf foo)".into())),
        ["4:0:defun:(setf foo)"]
    );
    assert_eq!(
        names(|r| r.name = Some("area".into())),
        ["3:0:defmethod:area :around (shape)"]
    );
    assert_eq!(
        names(|r| {
            r.name_pattern = Some("make".into());
            r.kinds = Some(vec!["DEFMACRO".into()]);
        }),
        ["2:0:defmacro:make-bar"]
    );
    let result = run(&dir, |r| {
        r.name = Some("make-foo".into());
        r.include_body = true;
    })
    .unwrap();
    let d = &result.definitions.as_ref().unwrap()[0];
    assert_eq!(d.body.as_deref(), Some("(defun make-foo (x) x)"));
    assert_eq!(d.signature, "(defun make-foo (x) ...)");
    assert_eq!(d.file, "src/a.lisp");
    assert_eq!(result.content, "src/a.lisp:1:(defun make-foo (x) x)\n");
}

#[test]
fn paging_by_entries_within_a_line_budget() {
    let text: String = (0..10)
        .map(|i| format!("(defun f{i} ()\n  (g))\n"))
        .collect();
    let dir = scratch("paging", &[("a.lisp", &text)]);
    let page = |offset: usize, limit: usize| {
        run(&dir, |r| {
            r.symbol = Some("g".into());
            r.offset = offset;
            r.limit = limit;
        })
        .unwrap()
    };
    // Package line (1) + header (1) + entry (2 lines each): 6 lines hold 2 entries.
    let first = page(0, 6);
    assert_eq!(first.references.as_ref().unwrap().len(), 2);
    assert!(first.truncated);
    assert_eq!(first.next_offset, Some(2));
    assert!(
        first.content.contains("continue with offset=2"),
        "{}",
        first.content
    );
    let last = page(8, 6);
    assert_eq!(last.references.as_ref().unwrap()[0].line, 17);
    assert!(!last.truncated && last.next_offset.is_none());
    // The first entry is always shown, however small the limit.
    assert_eq!(page(3, 1).references.unwrap().len(), 1);
    let past = page(50, 5);
    assert_eq!(past.total, 10);
    assert!(
        past.content.contains("past the last entry"),
        "{}",
        past.content
    );
}

#[test]
fn refusals_name_what_to_do() {
    let dir = scratch(
        "refusals",
        &[("a.lisp", "(defun a ())"), ("b.asd", "(defsystem b)")],
    );
    let code = |edit: fn(&mut FindRequest)| run(&dir, edit).unwrap_err();
    let e = code(|_| {});
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert!(e.message.contains("name_pattern") && e.message.contains("symbol"));
    let e = code(|r| {
        r.name = Some("a".into());
        r.symbol = Some("a".into());
    });
    assert!(e.message.contains("not name and symbol"), "{}", e.message);
    assert_eq!(
        code(|r| r.name_pattern = Some(r"\w{5000}".into())).code,
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        code(|r| r.symbol = Some("pkg:".into())).code,
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        code(|r| {
            r.symbol = Some("a".into());
            r.kinds = Some(vec![]);
        })
        .code,
        ErrorCode::InvalidArgument
    );
    let e = code(|r| {
        r.symbol = Some("a".into());
        r.path = "missing".into();
    });
    assert_eq!(e.code, ErrorCode::NotFound);
    let e = code(|r| {
        r.symbol = Some("a".into());
        r.path = "../x".into();
    });
    assert_eq!(e.code, ErrorCode::AccessDenied);
    // An .asd file: its directory.
    let result = run(&dir, |r| {
        r.name = Some("a".into());
        r.path = "b.asd".into();
    })
    .unwrap();
    assert_eq!(result.total, 1);
    assert_eq!(result.files_searched, 2);
    // Unknown members are refused by the JSON form.
    let bad: Result<FindRequest, _> = serde_json::from_str(r#"{"symbol": "a", "bogus": 1}"#);
    assert!(bad.unwrap_err().to_string().contains("bogus"));
}

#[test]
fn skipped_files_are_reported_and_the_rest_searched() {
    let dir = scratch(
        "skipped",
        &[("a.lisp", "(foo)"), ("b.lisp", "(foo \0 binary)")],
    );
    let result = run(&dir, |r| r.symbol = Some("foo".into())).unwrap();
    assert_eq!(result.total, 1);
    assert_eq!(result.files_skipped.len(), 1);
    assert_eq!(result.files_skipped[0].file, "b.lisp");
    assert_eq!(result.files_skipped[0].code, ErrorCode::BinaryFile);
    assert!(
        result
            .content
            .contains("1 file not searched: b.lisp (BINARY_FILE)"),
        "{}",
        result.content
    );
}

#[test]
fn a_name_pattern_gives_the_literals_every_match_contains() {
    let literals = |text: &str| pattern_literals(text);
    assert_eq!(literals("^make-"), Some(vec!["make-".to_string()]));
    assert_eq!(
        literals("foo|bar"),
        Some(vec!["foo".to_string(), "bar".to_string()])
    );
    assert_eq!(literals(".*-p$"), Some(vec!["-p".to_string()]));
    assert_eq!(literals("x+y"), Some(vec!["x".to_string()]));
    // Nothing every match must contain, or what the printed name may add: no prefilter.
    assert_eq!(literals("."), None);
    assert_eq!(literals("area :around"), None);
    assert_eq!(literals(r"\(t\)"), None);
    // Invalid regex: the text itself, matched literally.
    assert_eq!(literals("*foo("), None);
    assert_eq!(literals("*foo"), Some(vec!["*foo".to_string()]));
}

#[test]
fn collection_stops_at_its_budget_and_says_so() {
    let mut text = format!("(progn {})\n", "a ".repeat(150_000));
    text.push_str(&format!("(list {})\n", "a ".repeat(60_000)));
    let dir = scratch("budget", &[("a.lisp", &text)]);
    let result = run(&dir, |r| {
        r.symbol = Some("a".into());
        r.path = "a.lisp".into();
    })
    .unwrap();
    // The second form is past the budget: it is answered with the uses that fit
    // (200,000 - 150,001 entries and uses left, one of them its entry).
    assert_eq!(result.total, 2);
    let references = result.references.as_ref().unwrap();
    assert_eq!(references[0].uses.len(), 150_000);
    assert_eq!(references[1].uses.len(), 49_998);
    assert!(
        result
            .content
            .contains("the search stopped at its budget of 200000 entries and uses: the rest of a.lisp was not searched;"),
        "{}",
        &result.content[result.content.len().saturating_sub(500)..]
    );
}

#[test]
fn a_defpackage_entry_lists_its_exports() {
    let dir = scratch(
        "exports",
        &[(
            "p.lisp",
            "(defpackage #:shapes\n  (:use #:cl)\n  (:export #:area \"PERIMETER\" :scale))\n(in-package :shapes)\n(defun area (s) s)\n",
        )],
    );
    let result = run(&dir, |r| {
        r.name = Some("shapes".into());
        r.kinds = Some(vec!["defpackage".into()]);
    })
    .unwrap();
    let definitions = result.definitions.unwrap();
    assert_eq!(
        definitions[0].exports,
        Some(vec!["area".into(), "perimeter".into(), "scale".into()])
    );
    assert_eq!(
        result.content,
        "==> p.lisp <==\n1: (defpackage #:shapes\n exports: area perimeter scale\n"
    );
    // Other definitions carry none (and the JSON leaves the field out).
    let result = run(&dir, |r| r.name = Some("area".into())).unwrap();
    assert_eq!(result.definitions.unwrap()[0].exports, None);
}

#[test]
fn a_method_after_one_of_its_generic_function_is_not_named_again() {
    let dir = scratch(
        "methods-once",
        &[(
            "m.lisp",
            "(defmethod area ((s square)) 1)\n(defmethod area :around ((s square)) 2)\n(defun other ())\n(defmethod area ((c circle)) 3)\n",
        )],
    );
    let result = run(&dir, |r| r.name_pattern = Some(".".into())).unwrap();
    assert_eq!(
        result.content,
        "==> m.lisp <==\n1: (defmethod area ((s square))\n2: :around ((s square))\n3: (defun other ())\n4: (defmethod area ((c circle))\n"
    );
    // The JSON keeps every signature whole.
    let definitions = result.definitions.unwrap();
    assert!(definitions[1]
        .signature
        .starts_with("(defmethod area :around"));
}

/// A form that names nothing (`(declaim ...)`) whose uses are all on its first line is
/// that line alone, as a named one is: its heading would say less than the line.
#[test]
fn an_unnamed_form_with_its_uses_on_its_first_line_is_that_line() {
    let dir = scratch(
        "unnamed-first-line",
        &[(
            "d.lisp",
            "(declaim (inline foo bar\n                 baz))\n(let* ((x 1))\n  (foo x))\n",
        )],
    );
    let result = run(&dir, |r| r.symbol = Some("foo".into())).unwrap();
    assert_eq!(
        result.content,
        "==> d.lisp <==\n1: (declaim (inline foo bar\n4: (foo x))\n"
    );
}

/// A method after another of its generic function under the same `#+`/`#-` prefixes does
/// not repeat them; other prefixes are shown, and a method without any after one with
/// some is shown whole (a continued line without prefixes means "as above").
#[test]
fn a_methods_prefixes_are_said_once_while_they_stay_the_same() {
    let dir = scratch(
        "methods-prefixes",
        &[(
            "m.lisp",
            "#-x (defmethod area ((s square)) 1)\n#-x (defmethod area ((c circle)) 2)\n#+x (defmethod area ((c circle)) 3)\n(defmethod area ((d disc)) 4)\n(defmethod area ((e ellipse)) 5)\n",
        )],
    );
    let result = run(&dir, |r| r.name = Some("area".into())).unwrap();
    assert_eq!(
        result.content,
        "==> m.lisp <==\n1: #-x (defmethod area ((s square))\n2: ((c circle))\n3: #+x ((c circle))\n4: (defmethod area ((d disc))\n5: ((e ellipse))\n"
    );
}

/// A name made by a macro that the called macro's expansion calls (`m1` writing `(m0 ,x)`)
/// is found by name as by pattern, whether the calling macro builds names of its own or
/// not, and however many macros deep the definer is.
#[test]
fn a_name_a_called_macro_makes_is_found_by_name() {
    let dir = scratch(
        "called-macro",
        &[(
            "a.lisp",
            "(defmacro m0 (x) `(defun ,(intern (format nil \"~A-Z\" x)) () 1))
(defmacro builds-too (x) `(progn (m0 ,x) (defun ,(intern (format nil \"~A-Y\" x)) () 1)))
(defmacro only-calls (x) `(m0 ,x))
(defmacro calls-a-caller (x) `(only-calls ,x))
(builds-too q1)
(only-calls q2)
(calls-a-caller q3)
",
        )],
    );
    for (name, via) in [
        ("q1-z", "builds-too"),
        ("q2-z", "only-calls"),
        ("q3-z", "calls-a-caller"),
    ] {
        let by = |edit: &dyn Fn(&mut FindRequest)| -> Vec<(usize, Option<String>)> {
            run(&dir, |r| edit(r))
                .unwrap()
                .definitions
                .unwrap()
                .iter()
                .map(|d| (d.line, d.via.clone()))
                .collect()
        };
        let pattern = by(&|r| r.name_pattern = Some(format!("^{name}$")));
        assert_eq!(pattern.len(), 1, "{name}: {pattern:?}");
        assert_eq!(pattern[0].1.as_deref(), Some(via), "{name}");
        assert_eq!(
            by(&|r| r.name = Some(name.into())),
            pattern,
            "{name} by name"
        );
    }
}

/// A name holding a number the evaluator computes (a loop's counter, arithmetic, a
/// negative one), not text the macro or its call spells, is found by name as by pattern,
/// by a literal of a pattern too: the search by name must not rule such a call out before
/// expanding it. A string cut (`subseq`) or taken apart (`across`) is unknown to the
/// evaluator, so neither search finds what it would name.
#[test]
fn a_name_the_evaluator_computes_is_found_by_name() {
    let dir = scratch(
        "computed-names",
        &[(
            "c.lisp",
            "(defmacro counted (x) `(progn ,@(loop for i from 0 below 4 collect `(defun ,(intern (format nil \"~A-~D\" x i)) ()))))
(counted bar)
(defmacro times-ten (x) `(progn ,@(loop for i from 1 below 3 collect `(defun ,(intern (format nil \"~A-~D\" x (* 10 i))) ()))))
(times-ten ten)
(defmacro cut (x) `(progn ,@(loop for i from 1 below 4 collect `(defun ,(intern (format nil \"~A-~A\" x (subseq \"hello\" 0 i))) ()))))
(cut q)
(defmacro lettered (x) `(progn ,@(loop for c across \"xyz\" collect `(defvar ,(intern (format nil \"~A-~A\" c x)) nil))))
(lettered w)
(defmacro listed (x) `(progn ,@(loop for i from 0 below 2 collect `(defun ,(intern (format nil \"~A-~A\" (first (list x 'other)) i)) ()))))
(listed lst)
(defmacro counted-down (x) (let ((n 5)) (decf n 3) `(defun ,(intern (format nil \"~A~D\" x (- n 7))) ())))
(counted-down neg)
",
        )],
    );
    for name in ["bar-3", "ten-20", "neg-5", "lst-1"] {
        let by = |edit: &dyn Fn(&mut FindRequest)| -> Vec<usize> {
            run(&dir, |r| edit(r))
                .unwrap()
                .definitions
                .unwrap()
                .iter()
                .map(|d| d.line)
                .collect()
        };
        let pattern = by(&|r| r.name_pattern = Some(format!("^{name}$")));
        assert_eq!(pattern.len(), 1, "{name}: {pattern:?}");
        assert_eq!(
            by(&|r| r.name = Some(name.into())),
            pattern,
            "{name} by name"
        );
        let literal = by(&|r| r.name_pattern = Some(regex::escape(name)));
        assert_eq!(literal, pattern, "{name} by a pattern's literal");
    }
    for name in ["q-hel", "z-w"] {
        let pattern = run(&dir, |r| r.name_pattern = Some(format!("^{name}$"))).unwrap();
        assert_eq!(pattern.definitions.unwrap(), vec![], "{name}");
    }
}

/// A `defmacro` that the request's features leave out (`#-sbcl` under `sbcl`) is not
/// learned for calls through macros, whether it opens its line or not, its conditional
/// on its line or the line before: the one read is.
#[test]
fn a_macro_the_features_leave_out_writes_no_call_through_it() {
    for (k, src) in [
        "#+sbcl (defmacro w (x) `(bar ,x))\n#-sbcl (defmacro w (x) `(foo ,x))\n(defun c () (w 1))\n",
        "(progn\n #+sbcl (defmacro w (x) `(bar ,x))\n #-sbcl (defmacro w (x) `(foo ,x)))\n(defun c () (w 1))\n",
        "#+sbcl\n(defmacro w (x) `(bar ,x))\n#-sbcl\n\n(defmacro w (x) `(foo ,x))\n(defun c () (w 1))\n",
        "#+sbcl\n(defmacro w (x) `(bar ,x))\n#-(or sbcl ccl) ; not here\n(defmacro w (x) `(foo ,x))\n(defun c () (w 1))\n",
    ]
    .into_iter()
    .enumerate()
    {
        let dir = scratch(&format!("features-through-{k}"), &[("a.lisp", src)]);
        let callers = |name: &str| -> Vec<Option<String>> {
            run(&dir, |r| {
                r.callers = Some(name.into());
                r.features = Some(vec!["sbcl".into()]);
            })
            .unwrap()
            .callers
            .unwrap()
            .iter()
            .filter(|c| c.kind == "defun")
            .map(|c| c.name.clone())
            .collect()
        };
        assert_eq!(callers("bar"), [Some("c".to_string())], "{src}");
        assert_eq!(callers("foo"), Vec::<Option<String>>::new(), "{src}");
    }
}

/// The names a file's expansions make are kept in the answer: their bytes come out of the
/// file's expansion budget, so that few steps cannot keep a huge text (a macro doubling a
/// string, then making a thousand names of it per call: 13 MB of names out of 1.4 kB).
#[test]
fn the_names_expansions_make_are_bounded_by_the_files_budget() {
    let mut text = String::from(
        "(defmacro many (x)
  (let ((s (symbol-name x)))
    (dotimes (i 7) (setq s (concatenate 'string s s)))
    `(progn ,@(loop for i below 1000 collect `(defun ,(intern (format nil \"~A~D\" s i)) ())))))
",
    );
    for i in 0..100 {
        text.push_str(&format!("(many q{i})\n"));
    }
    let dir = scratch("made-bytes", &[("m.lisp", &text)]);
    let found = run(&dir, |r| r.name_pattern = Some("q".into()))
        .unwrap()
        .definitions
        .unwrap();
    let made: usize = found
        .iter()
        .filter(|d| d.via.is_some())
        .map(|d| d.name.len())
        .sum();
    let bound = text.len() * crate::model::expand::STEPS_PER_BYTE
        + crate::model::expand::MAX_EXPANSION_STEPS;
    assert!(made <= bound, "{made} bytes of made names, bound {bound}");
}

#[test]
fn cffi_definitions_are_found_by_their_lisp_names_though_only_the_c_name_is_spelled() {
    let dir = scratch(
        "cffi",
        &[(
            "ffi.lisp",
            "(cffi:defcfun \"SSL_CTX_new\" :pointer (method :pointer))\n(defcvar \"errno\" :int)\n(defcfun (\"close\" close-socket) :int (fd :int))\n",
        )],
    );
    let found = |edit: fn(&mut FindRequest)| definitions(&dir, edit);
    // The file never spells `ssl-ctx-new` or `*errno*`: the prefilter must look for the
    // C spellings too.
    assert_eq!(
        found(|r| r.name = Some("ssl-ctx-new".into())),
        ["1:cffi:defcfun:ssl-ctx-new"]
    );
    assert_eq!(
        found(|r| r.name = Some("*errno*".into())),
        ["2:defcvar:*errno*"]
    );
    assert_eq!(
        found(|r| r.name_pattern = Some("^ssl-ctx-new$".into())),
        ["1:cffi:defcfun:ssl-ctx-new"]
    );
    assert_eq!(
        found(|r| r.name = Some("close-socket".into())),
        ["3:defcfun:close-socket"]
    );
}

/// UFFI's `def-function` (the clsql drivers; CFFI's uffi-compat makes it a `defcfun`)
/// names its function by CFFI's rule, directly or through a project's wrapper macro
/// (clsql-sqlite3's `def-sqlite3-function`).
#[test]
fn uffi_functions_are_found_by_their_lisp_names() {
    let dir = scratch(
        "uffi",
        &[(
            "api.lisp",
            "(uffi:def-function \"atoi\" ((str (* :unsigned-char))) :returning :int)
(uffi:def-function (\"strtoul\" c-strtoul) ((str :cstring)) :returning :unsigned-long)
(defmacro def-sqlite3-function (name args &key (returning :void))
  `(def-function ,name ,args :module \"sqlite3\" :returning ,returning))
(def-sqlite3-function \"sqlite3_errcode\" ((db sqlite3-db)) :returning :int)
(def-sqlite3-function (\"sqlite3_open\" %open) ((name :cstring)) :returning :int)
",
        )],
    );
    let found = |name: &str| definitions(&dir, |r| r.name = Some(name.into()));
    assert_eq!(found("atoi"), ["1:uffi:def-function:atoi"]);
    assert_eq!(found("c-strtoul"), ["2:uffi:def-function:c-strtoul"]);
    assert_eq!(found("sqlite3-errcode"), ["5:def-function:sqlite3-errcode"]);
    assert_eq!(found("%open"), ["6:def-function:%open"]);
}

/// A macro that builds one name and writes another its call spells (osicat's
/// `define-designator`: `(deftype ,name ...)`, `(defun ,name ...)` and a
/// `define-foreign-type` of `NAME-designator`): the spelled name is found by name as by
/// pattern, through the macro, not by the generic rule on the call.
#[test]
fn a_spelled_name_of_a_macro_that_also_builds_is_found_by_name() {
    let dir = scratch(
        "spelled-and-built",
        &[(
            "d.lisp",
            "(defmacro define-designator (name ctype)
  (let ((c (format-symbol t \"~A-~A\" name '#:designator)))
    `(progn (deftype ,name () ',ctype) (defun ,name (x) x) (defvar ,c nil))))
(define-designator file-descriptor integer)
",
        )],
    );
    let by = |edit: &dyn Fn(&mut FindRequest)| -> Vec<(String, Option<String>)> {
        run(&dir, |r| edit(r))
            .unwrap()
            .definitions
            .unwrap()
            .iter()
            .map(|d| (d.kind.clone(), d.via.clone()))
            .collect()
    };
    let via = Some("define-designator".to_string());
    assert_eq!(
        by(&|r| r.name = Some("file-descriptor".into())),
        [
            ("deftype".to_string(), via.clone()),
            ("defun".to_string(), via.clone())
        ]
    );
    assert_eq!(
        by(&|r| r.name = Some("file-descriptor-designator".into())),
        [("defvar".to_string(), via)]
    );
}

/// A macro whose template writes a definition of a name it spells itself (cl-irc's
/// `generate-maskmode-hooks` writing `(defmethod default-hook ((message ,class)) ...)`):
/// its calls do not spell the name, and the methods they make are found by name as by
/// pattern.
#[test]
fn a_name_the_template_spells_is_found_by_name() {
    let dir = scratch(
        "template-spells",
        &[(
            "h.lisp",
            "(defgeneric default-hook (message))
(defmacro gen-hooks (a b)
  `(progn (defmethod default-hook ((message ,a)) 1)
          (defmethod default-hook ((message ,b)) 2)))
(gen-hooks m1 m2)
(defmacro fixed () `(defun fixed-fn () 1))
(fixed)
",
        )],
    );
    let by = |edit: &dyn Fn(&mut FindRequest)| -> Vec<(usize, String, Option<String>)> {
        run(&dir, |r| edit(r))
            .unwrap()
            .definitions
            .unwrap()
            .iter()
            .map(|d| (d.line, d.name.clone(), d.via.clone()))
            .collect()
    };
    let hooks = by(&|r| r.name = Some("default-hook".into()));
    let via = Some("gen-hooks".to_string());
    assert_eq!(
        hooks,
        [
            (1, "default-hook".to_string(), None),
            (5, "default-hook (m1)".to_string(), via.clone()),
            (5, "default-hook (m2)".to_string(), via)
        ]
    );
    assert_eq!(
        by(&|r| r.name_pattern = Some("^default-hook".into())),
        hooks
    );
    assert_eq!(
        by(&|r| r.name = Some("fixed-fn".into())),
        [(7, "fixed-fn".to_string(), Some("fixed".to_string()))]
    );
}

/// The operator of a definition is not one of its callees, even when the scope defines it
/// (SBCL's tree defines `defun` as a macro: `--callees make-hash-table` listed `calls
/// defun (line 414)`); a call of the same operator inside the body is one.
#[test]
fn a_definitions_own_operator_is_not_its_callee() {
    let dir = scratch(
        "own-operator",
        &[(
            "o.lisp",
            "(defmacro define-it (name &body body) `(defun ,name () ,@body))
(defun bar () 1)
#+x (define-it foo (bar) (define-it inner 2))
",
        )],
    );
    let result = run(&dir, |r| r.callees = Some("foo".into())).unwrap();
    let entries = result.callees.unwrap();
    assert_eq!(entries.len(), 1, "{entries:?}");
    let called: Vec<(&str, Vec<usize>)> = entries[0]
        .callees
        .iter()
        .map(|c| (c.name.as_str(), c.calls.iter().map(|u| u.column).collect()))
        .collect();
    assert_eq!(called, [("bar", vec![20]), ("define-it", vec![26])]);
}

#[test]
fn a_defcfun_wrapper_computing_its_name_with_cffis_parser_is_instantiated() {
    // osicat's defsyscall: the name is computed by cffi::parse-name-and-options.
    let dir = scratch(
        "defsyscall",
        &[(
            "unix.lisp",
            "(defmacro defsyscall (name-and-opts return-type &body args)\n  (multiple-value-bind (lisp-name c-name options)\n      (cffi::parse-name-and-options name-and-opts)\n    `(defcfun (,c-name ,lisp-name ,@options)\n         (errno-wrapper ,return-type :function-name ,lisp-name)\n       ,@args)))\n(defsyscall \"fchdir\" :int (fd :int))\n(defsyscall (\"mktemp\" %mktemp) :string (template :pointer))\n(defsyscall (get-pid \"getpid\") :int)\n",
        )],
    );
    let found = |name: &'static str| -> Vec<String> {
        definitions(&dir, move |r: &mut FindRequest| r.name = Some(name.into()))
    };
    assert_eq!(found("fchdir"), ["7:defcfun:fchdir"]);
    assert_eq!(found("%mktemp"), ["8:defcfun:%mktemp"]);
    assert_eq!(found("get-pid"), ["9:defcfun:get-pid"]);
}

#[test]
fn the_forms_of_another_systems_eval_always_are_top_level() {
    // cl-markdown's utilities.lisp: metatilities' `eval-always` (serapeum has one too),
    // its macro outside the scope.
    let dir = scratch(
        "eval-always",
        &[(
            "u.lisp",
            "(eval-always\n(defun _mark-range (a s e) a)\n\n(defun _mark-one (a ch) a))\n",
        )],
    );
    let found = definitions(&dir, |r| r.name = Some("_mark-one".into()));
    assert_eq!(found, ["4:defun:_mark-one"]);
}

#[test]
fn a_defun_wrapper_naming_its_function_with_cffis_translation_is_instantiated() {
    // consfigurator's define-error-retval-cfun: `(translate-name-from-foreign "acl_free"
    // '*package*)` names the defun; a (c-name lisp-name) list gives the Lisp name. By
    // pattern: a search by the exact name `acl-free` is ruled out by the name gate, whose
    // pieces (`acl_free`) do not spell it (docs/find.md).
    let dir = scratch(
        "retval-cfun",
        &[(
            "util.lisp",
            "(defmacro define-error-retval-cfun ((&key (errno t)) &body args)\n  (let ((defun (etypecase (car args)\n                 (string (translate-name-from-foreign (car args) '*package*))\n                 (list (cadar args)))))\n    `(defun ,defun () (foreign-funcall ,errno))))\n(define-error-retval-cfun () \"acl_free\" :int (obj :pointer))\n(define-error-retval-cfun ()\n  (\"acl_get_tag_type\" %acl-get-tag-type) :int)\n",
        )],
    );
    let found = definitions(&dir, |r| r.name_pattern = Some("^%?acl".into()));
    assert_eq!(found, ["6:defun:acl-free", "7:defun:%acl-get-tag-type"]);
}

/// cl-irc's `(create-irc-message-classes #.(remove-duplicates (mapcar #'second
/// *reply-names*)))`: a read-time form in a call of a learned macro is computed over the
/// scope's global variables (another file's `defparameter` of a constant) before the
/// call is instantiated; by name as by pattern. A variable some file assigns, or defines
/// twice, has no known value: the call keeps the generic rule.
#[test]
fn a_read_time_form_in_a_call_is_computed_over_the_scopes_constant_globals() {
    let dir = scratch(
        "read-eval",
        &[
            (
                "variable.lisp",
                "(defparameter *names* '((1 :welcome) (2 :bye) (3 :welcome)))\n(defvar *moved* '(:a))\n(setf *moved* (list :b))\n(defvar *twice* '(:x))\n(defconstant +late+ '(:late))\n",
            ),
            (
                "other.lisp",
                "(defvar *twice* '(:y))\n(defun run-later () (setf +late+ '(:c)))\n",
            ),
            (
                "classes.lisp",
                "(defmacro classes (list)\n  `(progn ,@(mapcar (lambda (k) `(defclass ,(intern (concatenate 'string \"MSG-\" (symbol-name k))) () ())) list)))\n(classes #.(remove-duplicates (mapcar #'second *names*)))\n(classes #.*moved*)\n(classes #.*twice*)\n(classes #.+late+)\n",
            ),
        ],
    );
    let found = |edit: &dyn Fn(&mut FindRequest)| -> Vec<String> {
        let mut names = definitions(&dir, |r| edit(r));
        names.sort();
        names
    };
    let made = [
        "3:defclass:msg-bye",
        "3:defclass:msg-welcome",
        "6:defclass:msg-late",
    ];
    assert_eq!(found(&|r| r.name_pattern = Some("^msg-".into())), made);
    assert_eq!(found(&|r| r.name = Some("msg-welcome".into())), made[1..2]);
    assert_eq!(found(&|r| r.name = Some("msg-bye".into())), made[..1]);
    // A function's assignment runs after the file is read: the value stays known.
    assert_eq!(found(&|r| r.name = Some("msg-late".into())), made[2..]);
    for unknown in ["msg-a", "msg-b", "msg-x", "msg-y"] {
        assert_eq!(
            found(&|r| r.name = Some(unknown.into())),
            Vec::<String>::new()
        );
    }
}

/// cl+ssl's `defcfun-versioned` chooses its expansion by `(member :cmucl *features*)`:
/// with `features` given, `*features*` holds them (the image expanding the macro is the
/// one reading the code); without, it is unknown and the call is not instantiated.
#[test]
fn a_macro_reading_features_expands_with_the_searchs_features() {
    let dir = scratch(
        "features-var",
        &[(
            "ffi.lisp",
            "(defmacro versioned (name)\n  (if (member :cmucl *features*)\n      `(defun ,(intern (format nil \"LATE-~A\" name)) ())\n      `(defun ,(intern (format nil \"NOW-~A\" name)) ())))\n(versioned open)\n",
        )],
    );
    let found = |features: &[&str]| -> Vec<String> {
        let features: Vec<String> = features.iter().map(|f| f.to_string()).collect();
        run(&dir, |r| {
            r.name_pattern = Some("open".into());
            r.features = (!features.is_empty()).then(|| features.clone());
        })
        .unwrap()
        .definitions
        .unwrap()
        .into_iter()
        .map(|d| format!("{}:{}", d.line, d.name))
        .collect()
    };
    assert_eq!(found(&["sbcl", "unix"]), ["5:now-open"]);
    assert_eq!(found(&["cmucl", "unix"]), ["5:late-open"]);
    assert_eq!(found(&[]), Vec::<String>::new());
}

#[test]
fn a_leading_dot_slash_is_left_out_with_the_slashes_after_it() {
    assert_eq!(super::shown_file("./a.lisp"), "a.lisp");
    assert_eq!(super::shown_file(".//a.lisp"), "a.lisp");
    assert_eq!(super::shown_file(".///sub/./b.lisp"), "sub/./b.lisp");
    assert_eq!(super::shown_file("././a.lisp"), "a.lisp");
    assert_eq!(super::shown_file("/abs/a.lisp"), "/abs/a.lisp");
}
