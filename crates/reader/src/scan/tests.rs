use super::*;

/// The items tile the input exactly, in order.
pub(crate) fn assert_cover(src: &[u8], s: &Scan) {
    let mut pos = 0;
    for item in &s.items {
        assert_eq!(
            item.span.start,
            pos,
            "gap or overlap at {pos} in {:?}",
            String::from_utf8_lossy(src)
        );
        assert!(item.span.end > item.span.start, "empty item at {pos}");
        pos = item.span.end;
    }
    assert_eq!(pos, src.len(), "items stop short of the end");
}

/// (kind, text) of the non-whitespace items.
fn items(src: &str) -> Vec<(ItemKind, &str)> {
    let s = scan(src.as_bytes());
    assert_cover(src.as_bytes(), &s);
    s.items
        .iter()
        .filter(|i| i.kind != ItemKind::Whitespace)
        .map(|i| (i.kind, &src[i.span.start..i.span.end]))
        .collect()
}

fn forms(src: &str) -> Vec<&str> {
    items(src)
        .into_iter()
        .filter(|(k, _)| *k == ItemKind::Form)
        .map(|(_, t)| t)
        .collect()
}

fn diag_kinds(src: &str) -> Vec<DiagnosticKind> {
    scan(src.as_bytes())
        .diagnostics
        .iter()
        .map(|d| d.kind)
        .collect()
}

#[test]
fn simple_forms_and_comments() {
    let src = ";; header\n(defun f (x) x) ; trailing\n#| block #| nested |# |#\n(g)";
    assert_eq!(
        items(src),
        vec![
            (ItemKind::Comment, ";; header"),
            (ItemKind::Form, "(defun f (x) x)"),
            (ItemKind::Comment, "; trailing"),
            (ItemKind::Comment, "#| block #| nested |# |#"),
            (ItemKind::Form, "(g)"),
        ]
    );
}

#[test]
fn prefixes_belong_to_their_form() {
    assert_eq!(
        forms("'a `(b ,c ,@d) #'e"),
        vec!["'a", "`(b ,c ,@d)", "#'e"]
    );
    assert_eq!(
        forms("#+sbcl #-ccl (defun f ()) (g)"),
        vec!["#+sbcl #-ccl (defun f ())", "(g)"]
    );
    assert_eq!(
        forms("#+(or sbcl ccl) ; why\n (f) x"),
        vec!["#+(or sbcl ccl) ; why\n (f)", "x"]
    );
    assert_eq!(
        forms("#1=(a . #1#) #.(x) #?\"s\" y"),
        vec!["#1=(a . #1#)", "#.(x)", "#?\"s\"", "y"]
    );
    assert_eq!(forms("#+#+a b c d"), vec!["#+#+a b c", "d"]);
    assert_eq!(forms(", x"), vec![", x"]);
}

#[test]
fn conditionals_are_recorded() {
    let src = "#+sbcl #-(or ccl) (defun f ())";
    let s = scan(src.as_bytes());
    let f = &s.items[0];
    let conds: Vec<&str> = f
        .conditionals
        .iter()
        .map(|c| &src[c.start..c.end])
        .collect();
    assert_eq!(conds, vec!["#+sbcl", "#-(or ccl)"]);
    assert_eq!(&src[f.core..f.span.end], "(defun f ())");
    assert!(f.core_is_list && !f.quoted);
    let q = &scan(b"'(a)").items[0];
    assert!(q.quoted && q.core_is_list);
}

#[test]
fn characters_strings_and_escapes() {
    assert_eq!(
        forms(r#"(a #\( #\) #\; #\" #\|) b"#),
        vec![r#"(a #\( #\) #\; #\" #\|)"#, "b"]
    );
    assert_eq!(
        forms(r#"(a "x)\"y") |sym ) bol| b\)c"#),
        vec![r#"(a "x)\"y")"#, "|sym ) bol|", "b\\)c"]
    );
    assert_eq!(forms("#\\Space #\\( x"), vec!["#\\Space", "#\\(", "x"]);
    assert_eq!(forms("foo#|x|#bar y"), vec!["foo#|x|#bar", "y"]);
    assert_eq!(forms("[a {b] c}"), vec!["[a", "{b]", "c}"]);
}

#[test]
fn dispatch_macros() {
    assert_eq!(
        forms("#(1 2) #*101 #:g #b101 #o7 #xFF #3r12 #c(1 2) #2a((1)) #s(p :x 1) #p\"/tmp\""),
        vec![
            "#(1 2)",
            "#*101",
            "#:g",
            "#b101",
            "#o7",
            "#xFF",
            "#3r12",
            "#c(1 2)",
            "#2a((1))",
            "#s(p :x 1)",
            "#p\"/tmp\""
        ]
    );
    assert_eq!(forms("#<foo bar> x"), vec!["#<foo bar>", "x"]);
    assert_eq!(diag_kinds("#<foo bar>"), vec![DiagnosticKind::Unreadable]);
}

#[test]
fn sbcl_package_prefixed_list_is_one_datum() {
    assert_eq!(
        forms("sb-impl::(defun f ()) pkg:(x) y"),
        vec!["sb-impl::(defun f ())", "pkg:(x)", "y"]
    );
    let src = "sb-impl::(defun f ())";
    let s = scan(src.as_bytes());
    assert_eq!(&src[s.items[0].core..], "(defun f ())");
    assert!(s.items[0].core_is_list);
}

#[test]
fn invalid_utf8_and_escaped_package_markers() {
    assert_eq!(
        forms("(list #\\\u{e2}) x".replace('\u{e2}', "\u{fffd}").as_str()),
        vec!["(list #\\\u{fffd})", "x"]
    );
    let src = b"(list #\\\xE2) x";
    let s = scan(src);
    assert_cover(src, &s);
    assert_eq!(
        s.items.iter().filter(|i| i.kind == ItemKind::Form).count(),
        2
    );
    assert!(s.diagnostics.is_empty());
    assert_eq!(forms("foo\\:(x) y"), vec!["foo\\:", "(x)", "y"]);
    assert_eq!(scan("\u{feff}".as_bytes()).line_count, 0);
}

#[test]
fn stray_close_paren() {
    assert_eq!(
        items("(a)) (b)"),
        vec![
            (ItemKind::Form, "(a)"),
            (ItemKind::Stray, ")"),
            (ItemKind::Form, "(b)")
        ]
    );
    assert_eq!(diag_kinds("(a))"), vec![DiagnosticKind::Stray]);
}

#[test]
fn unclosed_form_recovers_at_column_zero() {
    let src = "(defun f (x)\n  (let ((y 1))\n(defun g () 2)\n(h)";
    assert_eq!(
        forms(src),
        vec!["(defun f (x)\n  (let ((y 1))", "(defun g () 2)", "(h)"]
    );
    let s = scan(src.as_bytes());
    assert_eq!(s.diagnostics.len(), 1);
    let d = &s.diagnostics[0];
    assert_eq!(
        (d.kind, d.line, d.recovered_line),
        (DiagnosticKind::Unclosed, 1, Some(3))
    );
    assert_eq!(d.message, "Unclosed form at line 1; recovered at line 3.");
}

#[test]
fn balanced_column_zero_paren_inside_a_form_is_not_a_cut() {
    let src = "(defparameter *x* '(\n(a b)\n(c d)))\n(e)";
    assert_eq!(
        forms(src),
        vec!["(defparameter *x* '(\n(a b)\n(c d)))", "(e)"]
    );
}

#[test]
fn cascades_of_unclosed_forms() {
    let src = "(a\n(b)\n(c\n(d)\n(e";
    assert_eq!(forms(src), vec!["(a", "(b)", "(c", "(d)", "(e"]);
    // Comments between the last character and the cut are top-level items.
    assert_eq!(
        items("(a (b\n  ; note\n\n(c)"),
        vec![
            (ItemKind::Form, "(a (b"),
            (ItemKind::Comment, "; note"),
            (ItemKind::Form, "(c)")
        ]
    );
    assert_eq!(diag_kinds(src), vec![DiagnosticKind::Unclosed; 3]);
    assert_eq!(forms("(a\n(b))\n'(c\n(d)"), vec!["(a\n(b))", "'(c", "(d)"]);
    // After recovery, stray parens are still stray.
    assert_eq!(
        items("(p ((\n(a)) )\n"),
        vec![
            (ItemKind::Form, "(p (("),
            (ItemKind::Form, "(a)"),
            (ItemKind::Stray, ")"),
            (ItemKind::Stray, ")")
        ]
    );
}

#[test]
fn unterminated_constructs_run_to_the_end() {
    assert_eq!(forms("(f \"abc)\n (g)"), vec!["(f \"abc)\n (g)"]);
    assert_eq!(
        diag_kinds("(f \"abc)\n (g)"),
        vec![DiagnosticKind::Unclosed, DiagnosticKind::UnterminatedString]
    );
    assert_eq!(
        diag_kinds("\"abc"),
        vec![DiagnosticKind::UnterminatedString]
    );
    assert_eq!(items("#| abc"), vec![(ItemKind::Comment, "#| abc")]);
    assert_eq!(
        diag_kinds("#| abc"),
        vec![DiagnosticKind::UnterminatedComment]
    );
    assert_eq!(diag_kinds("|abc"), vec![DiagnosticKind::UnterminatedEscape]);
    assert_eq!(diag_kinds("'"), vec![DiagnosticKind::MissingDatum]);
    assert_eq!(
        items("'\n; c"),
        vec![(ItemKind::Form, "'"), (ItemKind::Comment, "; c")]
    );
    assert_eq!(diag_kinds("#+sbcl"), vec![DiagnosticKind::MissingDatum]);
    assert_eq!(diag_kinds("# x"), vec![DiagnosticKind::BareHash]);
    assert_eq!(forms("(a #"), vec!["(a #"]);
}

#[test]
fn shebang_bom_and_crlf() {
    let src = "#!/usr/bin/env ros\n(main)";
    assert_eq!(
        items(src),
        vec![
            (ItemKind::Shebang, "#!/usr/bin/env ros"),
            (ItemKind::Form, "(main)")
        ]
    );
    let src = "\u{feff}(a)\r\n(b)\r\n";
    let s = scan(src.as_bytes());
    assert_cover(src.as_bytes(), &s);
    let f: Vec<_> = s
        .items
        .iter()
        .filter(|i| i.kind == ItemKind::Form)
        .collect();
    assert_eq!(
        (f[0].span.start, f[0].start_line, f[1].start_line),
        (3, 1, 2)
    );
    assert_eq!(s.line_count, 2);
}

#[test]
fn line_numbers_and_count() {
    let s = scan(b"(a\n b)\n\n(c)");
    let f: Vec<_> = s
        .items
        .iter()
        .filter(|i| i.kind == ItemKind::Form)
        .collect();
    assert_eq!((f[0].start_line, f[0].end_line, f[1].start_line), (1, 2, 4));
    assert_eq!(s.line_count, 4);
    assert_eq!(scan(b"").line_count, 0);
    assert_eq!(scan(b"x\n").line_count, 1);
}

#[test]
fn deep_nesting_does_not_recurse() {
    let mut src = vec![b'('; 1_000_000];
    let s = scan(&src);
    assert_cover(&src, &s);
    src.extend(std::iter::repeat_n(b')', 1_000_000));
    let s = scan(&src);
    assert_eq!(s.items.len(), 1);
}

/// Diagnostic columns counted on from the one before agree with counting from the line's
/// start, on lines mixing ASCII, multi-byte characters and newlines.
#[test]
fn column_cursor_agrees_with_counting_from_the_line_start() {
    use super::ColumnCursor;
    let text = "ab)\u{e9})\n)x\u{2014})\n\n)))a\u{1F600})".as_bytes();
    let naive = |at: usize| {
        let start = text[..at]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |k| k + 1);
        1 + std::str::from_utf8(&text[start..at])
            .unwrap()
            .chars()
            .count()
    };
    let offsets: Vec<usize> = (0..=text.len())
        .filter(|&k| std::str::from_utf8(&text[..k]).is_ok())
        .collect();
    let mut cursor = ColumnCursor::default();
    for &at in &offsets {
        assert_eq!(cursor.column_of(text, at), naive(at), "at {at}");
    }
    // Out of order: still right.
    let mut cursor = ColumnCursor::default();
    for &at in offsets.iter().rev() {
        assert_eq!(cursor.column_of(text, at), naive(at), "at {at}");
    }
}

/// Past [`super::MAX_DIAGNOSTICS`] problems are counted, not kept: a file of stray `)`
/// cannot make the scan keep a diagnostic (and the view a note) per byte.
#[test]
fn diagnostics_past_the_cap_are_counted_not_kept() {
    use super::MAX_DIAGNOSTICS;
    let extra = 2_345;
    let text = ")".repeat(MAX_DIAGNOSTICS + extra);
    let scan = super::scan(text.as_bytes());
    assert_eq!(scan.diagnostics.len(), MAX_DIAGNOSTICS);
    assert_eq!(scan.omitted_diagnostics, extra);
    // The items still tile the input, one per stray `)`.
    assert_eq!(scan.items.len(), MAX_DIAGNOSTICS + extra);
    let under = super::scan(b")))");
    assert_eq!((under.diagnostics.len(), under.omitted_diagnostics), (3, 0));
}

#[test]
fn a_runaway_string_or_comment_ends_before_the_next_line_starting_with_paren() {
    // A docstring whose closing quote is missing: every later string reads inside out,
    // the form never closes; reading starts afresh at line 3.
    let src = "(defun a ()\n  \"doc\n  t)\n(defun b () \"B.\" 1)\n(c \"s\")\n";
    assert_eq!(
        forms(src),
        vec![
            "(defun a ()\n  \"doc\n  t)\n",
            "(defun b () \"B.\" 1)",
            "(c \"s\")"
        ]
    );
    let d = scan(src.as_bytes()).diagnostics;
    let seen: Vec<_> = d
        .iter()
        .map(|d| (d.kind, d.line, d.recovered_line))
        .collect();
    assert_eq!(
        seen,
        vec![
            (DiagnosticKind::Unclosed, 1, Some(4)),
            (DiagnosticKind::UnterminatedString, 2, Some(4))
        ]
    );
    assert_eq!(
        d[1].message,
        "Unterminated string at line 2; recovered at line 4."
    );
    // The same for `#|` inside a form, at top level, and a top-level string.
    assert_eq!(forms("(f #| x\n(g)\n"), vec!["(f #| x\n", "(g)"]);
    assert_eq!(
        items("#| x\n(g)"),
        vec![(ItemKind::Comment, "#| x\n"), (ItemKind::Form, "(g)")]
    );
    assert_eq!(forms("\"x\n(g)"), vec!["\"x\n", "(g)"]);
    // A `(` escaped by a `\\` at the end of the line before: no string was open there.
    assert_eq!(forms("(f x\\\n(g)\n(h)"), vec!["(f x\\\n", "(g)", "(h)"]);
    assert_eq!(
        diag_kinds("(f x\\\n(g)\n(h)"),
        vec![DiagnosticKind::Unclosed]
    );
}

#[test]
fn fresh_readings_only_where_something_ran_away() {
    // A file SBCL reads: a docstring may hold a line starting with `(`.
    let src = "(defun f ()\n  \"x\n(y)\nz\"\n  t)\n(g)\n";
    assert_eq!(
        forms(src),
        vec!["(defun f ()\n  \"x\n(y)\nz\"\n  t)", "(g)"]
    );
    // An unclosed list cut at a syntactic column-0 `(` is cut there, as before.
    assert_eq!(forms("(a\n(b)\n"), vec!["(a", "(b)"]);
}

#[test]
fn fresh_readings_are_bounded_per_file() {
    // Every line opens a comment that never closes: each cut costs a pass over the rest
    // of the file, so only the first MAX_RESYNCS are cut; the rest runs to the end.
    let n = MAX_RESYNCS + 5;
    let src = "(f #|\n".repeat(n);
    let got = forms(&src);
    assert_eq!(got.len(), MAX_RESYNCS + 1);
    assert!(got[..MAX_RESYNCS].iter().all(|f| *f == "(f #|\n"));
    assert_eq!(got[MAX_RESYNCS].len(), 6 * (n - MAX_RESYNCS));
}

#[test]
fn a_form_that_closes_by_accident_after_a_lost_quote_is_cut_too() {
    // The string from line 2 ends at b's docstring; `\(` there is escaped, so `y)` closes
    // `a` by accident and the rest reads inside out: the reading after `a` never gets
    // back in step, so `a` is cut at line 4 after all.
    let src = "(defun a ()\n  \"doc\n  t)\n(defun b () \"x \\(y) z\" 1)\n(defun c () 2)\n";
    assert_eq!(
        forms(src),
        vec![
            "(defun a ()\n  \"doc\n  t)\n",
            "(defun b () \"x \\(y) z\" 1)",
            "(defun c () 2)"
        ]
    );
    assert_eq!(
        diag_kinds(src),
        vec![DiagnosticKind::Unclosed, DiagnosticKind::UnterminatedString]
    );
    // The same shape, read whole by the Lisp reader, stays as it is.
    let intact = "(defun a ()\n  \"doc\n(x)\" t)\n(defun b () \"x \\(y) z\" 1)\n";
    assert_eq!(
        forms(intact),
        vec![
            "(defun a ()\n  \"doc\n(x)\" t)",
            "(defun b () \"x \\(y) z\" 1)"
        ]
    );
}

#[test]
fn a_block_comment_right_after_another_is_a_comment() {
    // The reader starts afresh after `|#`: `#||##|x|#` is two comments.
    assert_eq!(forms("(a #||##|| x|#) (b)"), vec!["(a #||##|| x|#)", "(b)"]);
}
