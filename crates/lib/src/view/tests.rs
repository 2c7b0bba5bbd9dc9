use super::*;
use crate::grammar::Grammar;
use crate::outline::outline_bytes;
use crate::tool::{view_options, ReadRequest};

const DEMO: &str = include_str!("../../../../fixtures/demo/demo.lisp");

fn view_of(src: &str, lisp: bool, edit: impl FnOnce(&mut ReadRequest)) -> View {
    let mut request = ReadRequest::new(if lisp { "x.lisp" } else { "x.txt" });
    edit(&mut request);
    let options = view_options(&request).expect("valid request");
    let source = Source::new(src.as_bytes());
    let grammar = Grammar::builtin();
    let outline = lisp.then(|| outline_bytes(src.as_bytes(), &grammar));
    render(&source, outline.as_ref(), &options)
}

#[test]
fn collapsed_demo_is_the_spec_example() {
    let v = view_of(DEMO, true, |_| {});
    assert_eq!(v.mode, Mode::LispCollapsed);
    // The exact output of docs/views.md#collapsed-view, kept in one file for every test that checks it.
    assert_eq!(
        v.content,
        include_str!("../../../../fixtures/demo/demo.collapsed.txt")
    );
    assert_eq!(
        (v.total_forms, v.expanded_forms, v.truncated, v.next_offset),
        (9, 0, false, None)
    );
}

#[test]
fn name_pattern_expands_verbatim_with_comments_and_conditionals() {
    let v = view_of(DEMO, true, |r| r.name_pattern = Some("FAST".into()));
    assert!(v.content.contains("25: #+sbcl\n26: (defun fast-path (x)\n27:   \"Use SBCL internals.\"\n28:   (sb-ext:truly-the fixnum x))\n"), "{}", v.content);
    assert_eq!(v.expanded_forms, 1);
    // A matching child of a container expands alone, inside its collapsed container.
    let v = view_of(DEMO, true, |r| r.name_pattern = Some("^with-shape$".into()));
    assert!(v.content.ends_with(
        "30: (eval-when (:compile-toplevel :load-toplevel :execute)\n31:   (defmacro with-shape ((var shape) &body body)\n32:     ;; Count every shape made through the macro.\n33:     `(let ((,var ,shape))\n34:        (incf *count*)\n35:        ,@body)))\n"
    ), "{}", v.content);
    // Methods match on NAME QUALIFIERS (SPECIALIZERS).
    let v = view_of(DEMO, true, |r| {
        r.name_pattern = Some("area :around \\(shape\\)".into())
    });
    assert_eq!(v.expanded_forms, 1);
    assert!(v
        .content
        .contains("22: (defmethod area :around ((s shape))\n23:   (max 0 (call-next-method)))\n"));
}

#[test]
fn content_pattern_and_no_match_notes() {
    let v = view_of(DEMO, true, |r| {
        r.content_pattern = Some("call-next-method".into())
    });
    assert_eq!(v.expanded_forms, 1);
    let v = view_of(DEMO, true, |r| {
        r.name_pattern = Some("nothing-like-this".into())
    });
    assert!(
        v.content.starts_with(
            "[No definition matched name_pattern \"nothing-like-this\".]\n 2: (defpackage"
        ),
        "{}",
        v.content
    );
    let v = view_of(DEMO, true, |r| r.content_pattern = Some("zzz".into()));
    assert!(v
        .content
        .starts_with("[No form matched content_pattern \"zzz\".]\n"));
}

#[test]
fn comment_modes() {
    let src = ";;;; Title\n;;; Section\n;; detail\n(defun f () 1)\n\n; lone\n(defun g () 2) ; trailing\n#| block |#\n";
    let none = view_of(src, true, |_| {}).content;
    assert_eq!(none, "4: (defun f () 1)\n7: (defun g () 2)\n");
    let headers = view_of(src, true, |r| r.comments = Comments::Headers).content;
    assert_eq!(
        headers,
        "1: ;;;; Title\n4: (defun f () 1)\n7: (defun g () 2)\n"
    );
    let preceding = view_of(src, true, |r| r.comments = Comments::Preceding).content;
    assert_eq!(preceding, "1: ;;;; Title\n2: ;;; Section\n3: ;; detail\n4: (defun f () 1)\n6: ; lone\n7: (defun g () 2)\n");
    let all = view_of(src, true, |r| r.comments = Comments::All).content;
    assert_eq!(
        all,
        "1: ;;;; Title\n2: ;;; Section\n3: ;; detail\n4: (defun f () 1)\n6: ; lone\n7: (defun g () 2)\n7: ; trailing\n8: #| block |#\n"
    );
}

#[test]
fn recovered_regions_are_visible() {
    let v = view_of(
        "(defun broken (x\n  (let ((y 1))\n(defun ok () 1)\n",
        true,
        |_| {},
    );
    assert_eq!(
        v.content,
        // The lambda list never closes, so it runs to the cut: shown as written, then
        // `...` and the closers the file does not have (not a `)` that looks like its own).
        "1: (defun broken (x (let ((y 1)) ...)))\n[Unclosed form at line 1; recovered at line 3.]\n3: (defun ok () 1)\n"
    );
    let v = view_of("(a))\n(b)\n", true, |_| {});
    assert_eq!(v.content, "1: (a)\n[Unmatched ) at line 1.]\n2: (b)\n");
}

#[test]
fn collapsed_paging() {
    let v = view_of(DEMO, true, |r| r.limit = 3);
    assert_eq!(
        v.content,
        " 2: (defpackage #:demo ...)\n 6: (in-package #:demo)\n 8: (defvar *count* 0 ...) ;; How many shapes exist.\n[Showing forms from line 2 to line 10 of 35. Use offset=10 to continue.]\n"
    );
    assert_eq!((v.truncated, v.next_offset), (true, Some(10)));
    let v = view_of(DEMO, true, |r| r.offset = 10);
    assert!(
        v.content.starts_with("11: (defclass shape"),
        "{}",
        v.content
    );
    // A single form larger than the budget is cut, and the footer says how to go on.
    let v = view_of(DEMO, true, |r| {
        r.limit = 2;
        r.offset = 24;
        r.name_pattern = Some("fast-path".into());
    });
    assert!(
        v.content.starts_with(
            "25: #+sbcl\n26: (defun fast-path (x)\n[Form at line 25 cut after 2 lines."
        ),
        "{}",
        v.content
    );
    assert_eq!(v.next_offset, Some(29));
}

#[test]
fn raw_mode() {
    let v = view_of("a\nb\nc\n", true, |r| {
        r.collapsed = false;
        r.limit = 2;
    });
    assert_eq!(
        (v.mode, v.content.as_str()),
        (
            Mode::Raw,
            "a\nb\n[Showing lines 1-2 of 3. Use offset=2 to read more.]\n"
        )
    );
    assert_eq!(v.next_offset, Some(2));
    let v = view_of("a\nb\nc\n", false, |r| {
        r.offset = 1;
        r.line_numbers = true;
    });
    assert_eq!(v.content, "2: b\n3: c\n");
    let v = view_of("a\nb\n", false, |r| r.offset = 5);
    assert_eq!(v.content, "[Offset 5 is past end of file (2 lines).]\n");
    assert_eq!(view_of("", false, |_| {}).content, "");
}

#[test]
fn text_filtered_mode() {
    let text: String = (1..=20)
        .map(|i| {
            format!(
                "line {i}{}\n",
                if i == 5 || i == 8 || i == 18 {
                    " hit"
                } else {
                    ""
                }
            )
        })
        .collect();
    let v = view_of(&text, false, |r| {
        r.content_pattern = Some("hit".into());
        r.context_lines = 1;
    });
    assert_eq!(v.mode, Mode::TextFiltered);
    assert_eq!(
        v.content,
        "4-line 4\n5:line 5 hit\n6-line 6\n7-line 7\n8:line 8 hit\n9-line 9\n--\n17-line 17\n18:line 18 hit\n19-line 19\n"
    );
    let v = view_of(&text, false, |r| {
        r.content_pattern = Some("hit".into());
        r.context_lines = 2;
    });
    assert!(v.content.starts_with("3-line 3\n4-line 4\n5:line 5 hit\n6-line 6\n7-line 7\n8:line 8 hit\n9-line 9\n10-line 10\n--\n16-line 16\n"), "{}", v.content);
    let v = view_of(&text, false, |r| r.content_pattern = Some("nope".into()));
    assert_eq!(v.content, "[No line matched content_pattern \"nope\".]\n");
    let v = view_of(&text, false, |r| {
        r.content_pattern = Some("hit".into());
        r.context_lines = 0;
        r.limit = 2;
    });
    assert_eq!(
        v.content,
        "5:line 5 hit\n--\n8:line 8 hit\n[more after line 17 of 20: offset=17]\n"
    );
    assert_eq!(v.next_offset, Some(17));
}

#[test]
fn grep_context_before_and_after_and_max_count() {
    let text: String = (1..=20)
        .map(|i| format!("line {i}{}\n", if i % 6 == 0 { " hit" } else { "" }))
        .collect();
    let grep = |before: Option<usize>, after: Option<usize>, max_count: Option<usize>| {
        view_of(&text, false, |r| {
            r.content_pattern = Some("hit".into());
            r.before_context = before;
            r.after_context = after;
            r.max_count = max_count;
        })
    };
    // -m 1 -B 2: the first match and the two lines before it, as `rg -n -m 1 -B 2`.
    let v = grep(Some(2), None, Some(1));
    assert_eq!(v.content, "4-line 4\n5-line 5\n6:line 6 hit\n");
    assert_eq!(v.stopped_at_max_count, Some(1));
    assert!(!v.truncated);
    // -A 1 alone: no leading context; every match.
    let v = grep(None, Some(1), None);
    assert_eq!(
        v.content,
        "6:line 6 hit\n7-line 7\n--\n12:line 12 hit\n13-line 13\n--\n18:line 18 hit\n19-line 19\n"
    );
    assert_eq!(v.stopped_at_max_count, None);
    // -m 2 -A 7: a third match inside the second's trailing context is context (grep -m).
    let v = grep(Some(0), Some(7), Some(2));
    assert!(
        v.content.ends_with("12:line 12 hit\n13-line 13\n14-line 14\n15-line 15\n16-line 16\n17-line 17\n18-line 18 hit\n19-line 19\n"),
        "{}",
        v.content
    );
    assert_eq!(v.stopped_at_max_count, Some(2));
}

#[test]
fn short_one_line_forms_are_shown_whole() {
    let long = format!("(declaim (inline {}))", "f ".repeat(50).trim_end());
    let src = format!(
        "(define-key *global-keymap* \"C-x C-f\" 'find-file)\n(declaim (inline foo))\n{long}\n#+sbcl (defun one (x) \"Doc.\" x)\n(progn (defun a () 1) (defun b () 2))\n(progn\n  (declaim (inline g))\n  (defun g () 1))\n(defun open-one (x\n"
    );
    let v = view_of(&src, true, |_| {});
    assert_eq!(
        v.content,
        format!(
            "1: (define-key *global-keymap* \"C-x C-f\" 'find-file)\n2: (declaim (inline foo))\n3: (declaim ...)\n4: #+sbcl (defun one (x) \"Doc.\" x)\n5: (progn (defun a () 1) (defun b () 2))\n6: (progn\n7:   (declaim (inline g))\n8:   (defun g () 1))\n9: (defun open-one (x ...))\n[Unclosed form at line 9; it runs to the end of the file.]\n"
        )
    );
    assert!(long.chars().count() > crate::view::collapsed::SHORT_FORM_CHARS);
}

#[test]
fn a_container_closes_before_its_last_childs_docstring() {
    let src = "(eval-when (:execute)\n  (defun helper (x)\n    \"Help with X.\"\n    (list x)))\n";
    let v = view_of(src, true, |_| {});
    assert_eq!(
        v.content,
        "1: (eval-when (:execute)\n2:   (defun helper (x) ...)) ;; Help with X.\n"
    );
    let nested =
        "(progn\n (let ((y 1))\n  (defun helper (x)\n    \"Help with X.\"\n    (list x y))))\n";
    let v = view_of(nested, true, |_| {});
    assert!(
        v.content
            .ends_with("3:     (defun helper (x) ...))) ;; Help with X.\n"),
        "{}",
        v.content
    );
}

#[test]
fn matches_outside_the_window_are_announced() {
    let mut src = String::new();
    for k in 1..=6 {
        src.push_str(&format!("(defun f{k} (x)\n  x)\n"));
    }
    let v = view_of(&src, true, |r| {
        r.name_pattern = Some("f[2356]".into());
        r.offset = 2;
        r.limit = 4;
    });
    assert_eq!(
        v.content,
        "[name_pattern also matches 2 forms after this window, first at line 9: use offset=8.]\n 3: (defun f2 (x)\n 4:   x)\n 5: (defun f3 (x)\n 6:   x)\n[Showing forms from line 3 to line 6 of 12. Use offset=6 to continue.]\n"
    );
    assert_eq!(v.expanded_forms, 2);
    let v = view_of(&src, true, |r| {
        r.content_pattern = Some("f[16]".into());
        r.offset = 4;
        r.limit = 2;
    });
    // The page from offset 4 holds no match: the window starts at the next one (line 11)
    // and says what it skipped (docs/views.md#matches-outside-the-window).
    assert!(
        v.content.starts_with(
            "[This window starts at the first match, line 11: the forms from line 5 to line 10 are not shown (read them without the patterns).]\n[content_pattern also matches 1 form before this window, first at line 1: use offset=0.]\n11: (defun f6 (x)\n"
        ),
        "{}",
        v.content
    );
}

#[test]
fn an_unclosed_form_never_shows_a_closing_parenthesis_of_its_own() {
    let v = view_of("(defun ok () t)\n(defun h ()\n", true, |_| {});
    assert_eq!(
        v.content,
        "1: (defun ok () t)\n2: (defun h () ...)\n[Unclosed form at line 2; it runs to the end of the file.]\n"
    );
}

const KINDS_FEATURES: &str = include_str!("../../../../fixtures/views/kinds_features.lisp");

#[test]
fn kinds_show_only_those_operators_with_matching_container_children() {
    let v = view_of(KINDS_FEATURES, true, |r| {
        r.kinds = Some(vec!["DEFMETHOD".into()]);
    });
    assert!(
        v.content
            .starts_with("[kinds: 9 other forms not shown (kinds DEFMETHOD).]\n"),
        "{}",
        v.content
    );
    // `cl:defmethod` is a defmethod; the container shows its matching child only.
    assert!(
        v.content.contains("14: (cl:defmethod describe-shape"),
        "{}",
        v.content
    );
    assert!(v.content.contains("17: (eval-when (:compile-toplevel :load-toplevel :execute)\n20:   (defmethod area :around ((s shape)) ...))\n"), "{}", v.content);
    assert!(
        !v.content.contains("defun") && !v.content.contains("defvar"),
        "{}",
        v.content
    );
    // name_pattern expands only forms shown.
    let v = view_of(KINDS_FEATURES, true, |r| {
        r.kinds = Some(vec!["defclass".into()]);
        r.name_pattern = Some("helper".into());
    });
    assert_eq!(v.expanded_forms, 0, "{}", v.content);
    assert!(
        v.content.contains("[No definition matched name_pattern"),
        "{}",
        v.content
    );
}

#[test]
fn features_hide_forms_read_conditionals_exclude() {
    let v = view_of(KINDS_FEATURES, true, |r| {
        r.features = Some(vec!["sbcl".into(), "x86-64".into(), "unix".into()]);
    });
    assert!(
        v.content.starts_with(
            "[features: 2 forms not shown, excluded by #+/#- under (sbcl x86-64 unix).]\n"
        ),
        "{}",
        v.content
    );
    assert!(v.content.contains("#+sbcl (defun sbcl-only"));
    assert!(
        !v.content.contains("not-sbcl")
            && !v.content.contains("ccl-or-ecl")
            && !v.content.contains("#+(or")
    );
    // Undecidable: shown.
    assert!(v
        .content
        .contains("#+#.(cl:if t '(and) '(or)) (defun read-time-feature"));
    // Without features nothing is hidden.
    let v = view_of(KINDS_FEATURES, true, |_| {});
    assert!(!v.content.contains("[features") && v.content.contains("not-sbcl"));
}

#[test]
fn hidden_forms_take_no_lines_of_a_page() {
    let edit = |r: &mut ReadRequest| {
        r.kinds = Some(vec!["defun".into()]);
        r.features = Some(vec!["sbcl".into()]);
        r.limit = 4;
    };
    let v = view_of(KINDS_FEATURES, true, edit);
    assert_eq!(v.next_offset, Some(35), "{}", v.content);
    assert_eq!(v.content.lines().filter(|l| !l.starts_with('[')).count(), 4);
    let v = view_of(KINDS_FEATURES, true, |r| {
        edit(r);
        r.offset = 35;
    });
    assert_eq!(v.next_offset, None);
    assert!(
        v.content.contains("36: #+#.") && v.content.contains("40: (DEFUN shout"),
        "{}",
        v.content
    );
    assert!(
        !v.content.contains("[kinds") && !v.content.contains("[features"),
        "{}",
        v.content
    );
}

/// The lines shown forms start on (what a map uses to skip steps that cannot fit) are
/// never more than the full and no-docstrings views take, and forms sharing a line count
/// once.
#[test]
fn shown_lines_are_the_fewest_lines_of_the_full_views() {
    let shown_lines = |src: &str| {
        let grammar = Grammar::builtin();
        let outline = outline_bytes(src.as_bytes(), &grammar);
        let options = view_options(&ReadRequest::new("x.lisp")).expect("valid request");
        count_shown(&outline, &options).lines
    };
    let sources = [
        DEMO,
        "(a) (b)\n(c)\n",
        "()()()()\n",
        "(defun f ()\n  1) (defun g () 2)\n(h)\n",
        "#+sbcl (a) #-sbcl (b)\n; c\n(d \"doc\n string\")\n",
    ];
    for src in sources {
        for detail in [Detail::Full, Detail::NoDocstrings] {
            let view = view_of(src, true, |r| r.detail = Some(detail));
            let lines = view.content.lines().filter(|l| !l.starts_with('[')).count();
            assert!(
                shown_lines(src) <= lines,
                "{src:?} at {detail:?}: {}",
                view.content
            );
        }
    }
    assert_eq!(shown_lines("(a) (b)\n(c)\n"), 2);
    assert_eq!(shown_lines("()()()()\n"), 1);
}
