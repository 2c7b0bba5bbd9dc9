use super::*;

fn forms(src: &str) -> Vec<Form<'_>> {
    // The forms borrow the grammar: one for the whole test run.
    static GRAMMAR: std::sync::LazyLock<Grammar> = std::sync::LazyLock::new(Grammar::builtin);
    let o = outline_bytes(src.as_bytes(), &GRAMMAR);
    o.items.into_iter().filter_map(|i| i.form).collect()
}

fn sig(src: &str) -> String {
    let f = forms(src).remove(0);
    let mut s = f.conditionals().join(" ");
    if !s.is_empty() {
        s.push(' ');
    }
    s.push_str(f.signature());
    if let Some(doc) = f.doc() {
        s.push_str(" ;; ");
        s.push_str(doc);
    }
    s
}

#[test]
fn spec_example_signatures() {
    assert_eq!(
        sig("(defpackage #:demo (:use #:cl) (:export #:area))"),
        "(defpackage #:demo ...)"
    );
    assert_eq!(sig("(in-package   #:demo)"), "(in-package #:demo)");
    assert_eq!(
        sig("(defvar *count* 0 \"How many shapes exist.\")"),
        "(defvar *count* 0 ...) ;; How many shapes exist."
    );
    assert_eq!(
        sig("(defclass shape ()\n  ((name :initarg :name)\n   (size :initform 0))\n  (:documentation \"A thing with a size.\"))"),
        "(defclass shape () (name size) ...) ;; A thing with a size."
    );
    assert_eq!(
        sig("(defgeneric area (shape)\n  (:documentation \"Area of SHAPE.\"))"),
        "(defgeneric area (shape) ...) ;; Area of SHAPE."
    );
    assert_eq!(
        sig("(defmethod area ((s shape)) 1)"),
        "(defmethod area ((s shape)) ...)"
    );
    assert_eq!(
        sig("(defmethod area :around ((s shape)) (call-next-method))"),
        "(defmethod area :around ((s shape)) ...)"
    );
    assert_eq!(
        sig("#+sbcl\n(defun fast-path (x)\n  \"Use SBCL internals.\"\n  (sb-ext:truly-the fixnum x))"),
        "#+sbcl (defun fast-path (x) ...) ;; Use SBCL internals."
    );
}

#[test]
fn containers_have_children_with_lines() {
    let src = "(eval-when (:compile-toplevel :load-toplevel :execute)\n  (defmacro with-shape ((var shape) &body body)\n    `(let ((,var ,shape)) ,@body)))";
    let f = forms(src).remove(0);
    assert_eq!(
        f.signature(),
        "(eval-when (:compile-toplevel :load-toplevel :execute) ...)"
    );
    assert_eq!(f.children.len(), 1);
    let child = &f.children[0];
    assert_eq!(child.start_line, 2);
    assert_eq!(child.end_line, 3);
    assert_eq!(
        child.form.as_ref().unwrap().signature(),
        "(defmacro with-shape ((var shape) &body body) ...)"
    );
    let f = forms("(progn\n  #+sbcl (defun a ())\n  (defvar *b*))").remove(0);
    let kids: Vec<_> = f
        .children
        .iter()
        .map(|c| c.form.as_ref().unwrap())
        .collect();
    assert_eq!(kids[0].conditionals(), vec!["#+sbcl"]);
    assert_eq!(kids[0].name.as_deref(), Some("a"));
    assert_eq!(kids[1].signature(), "(defvar *b*)");
}

#[test]
fn docstrings_follow_the_standard() {
    assert_eq!(forms("(defun f () \"just a value\")")[0].doc(), None);
    assert_eq!(forms("(defun f () \"doc\" 1)")[0].doc(), Some("doc"));
    assert_eq!(
        forms("(defun f (x) (declare (ignore x)) \"doc\" 1)")[0].doc(),
        Some("doc")
    );
    assert_eq!(
        forms("(defun f () \"first line\nsecond\" 1)")[0].doc(),
        Some("first line")
    );
    assert_eq!(
        forms("(defun f () \"say \\\"hi\\\"\" 1)")[0].doc(),
        Some("say \"hi\"")
    );
    let long = format!("(defun f () \"{}\" 1)", "x".repeat(100));
    assert_eq!(forms(&long)[0].doc().map(str::len), Some(DOC_CHARS));
    assert_eq!(
        forms("(defun f () \"\n  Second line.\" 1)")[0].doc(),
        Some("Second line.")
    );
    assert_eq!(
        forms("(defsetf middle set-middle \"Set it.\")")[0].doc(),
        Some("Set it.")
    );
    assert_eq!(
        forms("(defmethod m :before ((a b)) \"doc\" 1)")[0].doc(),
        Some("doc")
    );
    assert_eq!(
        forms("(defpackage :p (:documentation \"Pkg doc.\"))")[0].doc(),
        Some("Pkg doc.")
    );
    assert_eq!(
        forms("(defstruct (point (:conc-name p-)) \"A point.\" x (y 0))")[0].doc(),
        Some("A point.")
    );
    assert_eq!(forms("(defvar *x* \"a value, not a doc\")")[0].doc(), None);
}

#[test]
fn names_and_methods() {
    let f =
        forms("(defmethod (setf size) :after ((new integer) (s shape) &optional x) x)").remove(0);
    assert_eq!(f.name.as_deref(), Some("(setf size)"));
    assert_eq!(
        f.method_key().as_deref(),
        Some("(setf size) :after (integer shape)")
    );
    let f = forms("(defstruct (point (:conc-name p-)) x (y 0 :type fixnum))").remove(0);
    assert_eq!(f.name.as_deref(), Some("point"));
    assert_eq!(f.signature(), "(defstruct (point (:conc-name p-)) x y)");
    let f = forms("(CL:DEFUN Foo-Bar (X) X)").remove(0);
    assert_eq!(
        (f.operator.as_deref(), f.name.as_deref()),
        (Some("CL:DEFUN"), Some("Foo-Bar"))
    );
    assert_eq!(f.signature(), "(CL:DEFUN Foo-Bar (X) ...)");
    let f = forms("(alexandria:define-constant +e+ 2.718 :test #'=)").remove(0);
    assert_eq!(f.signature(), "(alexandria:define-constant +e+ 2.718 ...)");
    let f = forms("(define-widget my-widget (x) body)").remove(0);
    assert_eq!(
        (f.name.as_deref(), f.signature(), f.definer),
        (
            Some("my-widget"),
            "(define-widget my-widget (x) ...)",
            Some("def")
        )
    );
}

#[test]
fn signatures_fold_whitespace_and_drop_comments() {
    assert_eq!(
        sig("(defun f (a ; the a\n         b #| the b |# c)\n  body)"),
        "(defun f (a b c) ...)"
    );
    assert_eq!(
        sig("(defun f (&optional (c #\\;)) c)"),
        "(defun f (&optional (c #\\;)) ...)"
    );
    assert_eq!(sig("(defun f ()\n)"), "(defun f ())");
    assert_eq!(sig("(defvar *x*)"), "(defvar *x*)");
    assert_eq!(
        sig("(defparameter *table*\n  '(1 2 3))"),
        "(defparameter *table* '(1 2 3))"
    );
    assert_eq!(
        sig("(defparameter *table* '(1\n 2 3))"),
        "(defparameter *table* ...)"
    );
    assert_eq!(
        sig("(defsystem \"demo\" :description \"Demo system.\" :depends-on (\"alexandria\" #:cl-ppcre) :components ((:file \"a\")))"),
        "(defsystem \"demo\" :depends-on (\"alexandria\" #:cl-ppcre) ...) ;; Demo system."
    );
}

#[test]
fn containers_and_in_package_define_no_name() {
    assert_eq!(forms("(eval-when (:execute) (f))")[0].name, None);
    assert_eq!(forms("(in-package :x)")[0].name, None);
}

#[test]
fn unclosed_forms_are_still_classified() {
    let f = forms("(defun broken (x\n(defun ok () 1)");
    assert_eq!(
        (f[0].name.as_deref(), f[0].definer),
        (Some("broken"), Some("defun"))
    );
    assert_eq!(f[1].signature(), "(defun ok () ...)");
}

#[test]
fn review_fixes() {
    // Keywords keep their case; the package prefix of SBCL's extended syntax stays.
    assert_eq!(
        sig("(ASDF:DEFSYSTEM \"LOUD\" :DEPENDS-ON (\"QUIET\"))"),
        "(ASDF:DEFSYSTEM \"LOUD\" :DEPENDS-ON (\"QUIET\"))"
    );
    assert_eq!(
        sig("sb-impl::(defun helper (x) x)"),
        "sb-impl::(defun helper (x) ...)"
    );
    // Numbers are not operators; declarations and atoms are not children.
    assert_eq!(forms("(42 a b)")[0].operator, None);
    let f = forms("(locally (declare (optimize speed)) 42 (defun f ()))").remove(0);
    assert_eq!(f.children.len(), 1);
    // Long structure names are abbreviated to the name, never cut inside an option.
    let f = forms("(defstruct (point3 (:include point) (:conc-name p3-) (:constructor make-point3 (x y z))) z)").remove(0);
    assert_eq!(f.signature(), "(defstruct (point3 ...) z)");
    assert_eq!(
        sig("(defclass c () (a #+sbcl b))"),
        "(defclass c () (a #+sbcl b))"
    );
    assert_eq!(sig("(defun f (a\n   b\n )\n x)"), "(defun f (a b) ...)");
    assert_eq!(
        sig("(defun f (&optional (c #\\( ) d) x)"),
        "(defun f (&optional (c #\\( ) d) ...)"
    );
}

#[test]
fn plain_forms() {
    assert_eq!(sig("(setf (gethash 1 *h*) 2)"), "(setf ...)");
    assert_eq!(sig("(register-thing foo 1 2)"), "(register-thing foo ...)");
    assert_eq!(sig("(format t \"hello\")"), "(format t ...)");
    assert_eq!(sig("(provide \"x\")"), "(provide \"x\")");
    assert_eq!(sig("(main)"), "(main)");
    assert_eq!(sig("'(a b c)"), "'(a b c)");
    assert_eq!(sig("*foo*"), "*foo*");
    assert_eq!(sig("((lambda (x) x) 1)"), "((lambda (x) x) 1)");
}

#[test]
fn deep_containers_are_bounded() {
    let depth = 10_000;
    let src = format!(
        "{}(defun f ()){}",
        "(progn ".repeat(depth),
        ")".repeat(depth)
    );
    let f = forms(&src).remove(0);
    let mut levels = 0;
    let mut node = &f;
    while let Some(child) = node.children.first() {
        node = child.form.as_ref().unwrap();
        levels += 1;
    }
    assert_eq!(levels, MAX_CONTAINER_DEPTH);
}

#[test]
fn a_container_lists_at_most_max_children() {
    let n = MAX_CHILDREN + 3;
    let src = format!("(progn\n{})\n", "(defun f ())\n".repeat(n));
    let grammar = Grammar::builtin();
    let o = outline_bytes(src.as_bytes(), &grammar);
    let form = o.items[0].form.as_ref().unwrap();
    assert_eq!(form.children.len(), MAX_CHILDREN);
    // Line 1 is `(progn`, child k (0-based) is on line k + 2.
    assert_eq!(form.children_cut_at, Some(MAX_CHILDREN + 2));
    let small = outline_bytes(b"(progn (defun f ()))", &grammar);
    assert_eq!(small.items[0].form.as_ref().unwrap().children_cut_at, None);
}

#[test]
fn the_generic_rule_shows_the_list_after_the_name_and_the_docstring() {
    for (src, signature, name) in [
        (
            "(define-buffer-command find-file (filename)\n  \"Open FILENAME.\"\n  (open filename))",
            "(define-buffer-command find-file (filename) ...) ;; Open FILENAME.",
            "find-file",
        ),
        (
            "(define-my-method accept :around ((type weekday) stream (view t) &key)\n  (call-next-method))",
            "(define-my-method accept :around ((type weekday) stream (view t) &key) ...)",
            "accept",
        ),
        (
            "(defwidget-thing scheduler (frame pane)\n  ((x :initarg :x)))",
            "(defwidget-thing scheduler (frame pane) ...)",
            "scheduler",
        ),
        // A list in the name's place: its first symbol names the form, `(setf foo)` is
        // the name as written, a list headed by a keyword is the name.
        (
            "(define-easy-handler (hello :uri \"/hello\") (name)\n  (greet name))",
            "(define-easy-handler (hello :uri \"/hello\") (name) ...)",
            "hello",
        ),
        (
            "(defaccessor (setf size) (value shape)\n  \"Set it.\"\n  (store value shape))",
            "(defaccessor (setf size) (value shape) ...) ;; Set it.",
            "(setf size)",
        ),
        ("(defroute (:get \"/\") ()\n  (home))", "(defroute (:get \"/\") () ...)", "(:get \"/\")"),
        // Keywords not followed by a list are options: nothing is inferred.
        ("(define-foo my-foo\n  :option 1)", "(define-foo my-foo ...)", "my-foo"),
        // A lone string is a return value, not a docstring (as for defun).
        ("(deftemplate page ()\n  \"Text.\")", "(deftemplate page () ...)", "page"),
    ] {
        let f = forms(src).remove(0);
        assert_eq!(f.definer, Some("def"), "{src}");
        assert_eq!(f.name.as_deref(), Some(name), "{src}");
        assert_eq!(sig(src), signature);
    }
}

#[test]
fn a_long_inferred_list_is_abbreviated_balanced() {
    let params: Vec<String> = (0..40).map(|k| format!("(p{k} \"x y\")")).collect();
    let src = format!("(define-thing name ({})\n  body)", params.join(" "));
    let s = sig(&src);
    assert!(s.chars().count() < INFERRED_LIST_CHARS + 40, "{s}");
    assert!(
        s.starts_with("(define-thing name ((p0 \"x y\") (p1") && s.ends_with(") ...)"),
        "{s}"
    );
    assert!(Balance::of(&s).is_closed(), "{s}");
}

#[test]
fn abbreviations_and_unclosed_parts_stay_balanced() {
    for (text, max, expected) in [
        ("(a (b c d e f g))", 10, "(a (b c ...))"),
        ("\"abcdefghijklmnop\"", 8, "\"abcd...\""),
        ("(a #\\( b c d e f g h)", 9, "(a #\\( ...)"),
        ("(a ((b c d e f g h)))", 8, "(a (( ...)))"),
        ("(a |x (y z| b c d e f)", 13, "(a |x (y z...|)"),
        ("short", 10, "short"),
    ] {
        let cut = abbreviate_balanced(text, max);
        assert_eq!(cut, expected, "{text}");
        assert!(Balance::of(&cut).is_closed(), "{cut}");
    }
    // An unclosed form: the file's text, `...`, then the closers it lacks.
    assert_eq!(
        sig("(defun broken (x (let ((y 1)))\n"),
        "(defun broken (x (let ((y 1))) ...))"
    );
    assert_eq!(sig("(in-package :foo"), "(in-package :foo ...)");
    assert_eq!(sig("'(a \"b"), "'(a \"b...\")");
}

/// `Balance::of` takes a fast path (parentheses only) for texts without strings,
/// escapes, `#` or `;`: it must give what the state machine gives, for every text. Every
/// text of up to 5 characters over the characters that matter, and longer ones.
#[test]
fn balance_fast_path_agrees_with_the_state_machine() {
    let alphabet = ['(', ')', '"', '|', '\\', '#', ';', 'a', '+', '\n', ' '];
    let mut texts: Vec<String> = vec![String::new()];
    let mut checked = 0usize;
    for _ in 0..5 {
        let mut longer = Vec::with_capacity(texts.len() * alphabet.len());
        for t in &texts {
            for c in alphabet {
                let mut s = t.clone();
                s.push(c);
                assert_eq!(Balance::of(&s), Balance::of_any(s.as_bytes()), "{s:?}");
                checked += 1;
                longer.push(s);
            }
        }
        texts = longer;
    }
    assert_eq!(
        checked,
        (1..=5).map(|n| alphabet.len().pow(n)).sum::<usize>()
    );
    for text in [
        "(defun foo (a (b c) &key (d 1)) ...)",
        "(defknown (abs phase signum) (number) ...)))",
        "((((",
        ")))(",
        // Past the short loop: the SIMD searches.
        &"(a (b) c ".repeat(40),
        &format!("{}\"(\"", "(x) ".repeat(80)),
    ] {
        assert_eq!(
            Balance::of(text),
            Balance::of_any(text.as_bytes()),
            "{text}"
        );
    }
}

/// `fold` takes a one-pass path ([`fold_plain`]) for spans without strings, escapes, `#`
/// or comments: it must give what the chunk-by-chunk fold gives, and a capped fold must
/// give the start of the whole fold (but for its last character), more than `cap`
/// characters of it when cut. Every
/// text of up to 5 characters over the characters that matter, at every cap.
#[test]
fn fold_fast_path_agrees_with_the_chunk_fold() {
    let alphabet = [
        '(', ')', ' ', 'a', '\'', ',', '\n', '\t', '#', ';', '"', '\\', '|', 'é',
    ];
    let mut texts: Vec<String> = vec![String::new()];
    let mut plain = 0usize;
    for _ in 0..5 {
        let mut longer = Vec::with_capacity(texts.len() * alphabet.len());
        for t in &texts {
            for c in alphabet {
                let mut s = t.clone();
                s.push(c);
                let b = s.as_bytes();
                let mut whole = Vec::new();
                fold_chunks(&mut whole, b, 0, b.len(), usize::MAX);
                let mut fast = Vec::new();
                if fold_plain(&mut fast, b, usize::MAX) {
                    assert_eq!(fast, whole, "{s:?}");
                    plain += 1;
                }
                let whole = String::from_utf8(whole).unwrap();
                for cap in 0..=6 {
                    let capped = fold_capped(b, 0, b.len(), cap);
                    // A dispatch chunk may end inside a character (`#é`): the last
                    // character of a cut fold may be U+FFFD.
                    let mut start = capped.clone();
                    if capped != whole {
                        start.pop();
                    }
                    assert!(whole.starts_with(&start), "{s:?} cap {cap}: {capped:?}");
                    let cut = capped.len() < whole.len();
                    assert!(!cut || capped.chars().count() > cap, "{s:?} cap {cap}");
                }
                longer.push(s);
            }
        }
        texts = longer;
    }
    assert!(plain > 10_000, "{plain}");
    let text = "(defknown (null symbolp\n           atom) ( t  type-specifier )\r\n ,@x)";
    let mut fast = Vec::new();
    assert!(fold_plain(&mut fast, text.as_bytes(), usize::MAX));
    assert_eq!(
        fast,
        b"(defknown (null symbolp atom) (t type-specifier) ,@x)"
    );
}

/// Each item of a walk, as (kind, span, lines, signature).
fn walked(items: &dyn Items<'_>) -> Vec<(ItemKind, usize, usize, usize, String)> {
    let mut out = Vec::new();
    items.each_item(&mut |i| {
        let sig = i
            .form
            .as_ref()
            .map(|f| f.signature().to_string())
            .unwrap_or_default();
        out.push((i.kind, i.start, i.end, i.start_line, sig));
        ControlFlow::Continue(())
    });
    out
}

#[test]
fn a_streamed_walk_replays_the_first_scan_and_gives_the_items_a_scan_gives() {
    let grammar = Grammar::builtin();
    let src = b";; head\n(in-package :x)\n#+sbcl (defun f (a) a)\n\"s\" (defmacro m () `(a ,b))\n(defun g";
    let streamed = StreamedOutline::new(src, &grammar);
    // The items were kept: a walk does not scan again.
    assert_eq!(
        streamed.kept.as_ref().map(Vec::len),
        Some(streamed.item_count)
    );
    let whole = outline_bytes(src, &grammar);
    assert_eq!(walked(&streamed), walked(&whole));
    // A second walk gives the same, and a walk stops where its caller breaks.
    assert_eq!(walked(&streamed), walked(&whole));
    let mut seen = 0;
    streamed.each_item(&mut |_| {
        seen += 1;
        ControlFlow::Break(())
    });
    assert_eq!(seen, 1);
}

#[test]
fn a_streamed_outline_keeps_no_items_past_the_files_size() {
    let grammar = Grammar::builtin();
    // An item every two bytes: kept items would take many times the file (over the
    // floor a small file has).
    let src = "a ".repeat(100_000);
    let streamed = StreamedOutline::new(src.as_bytes(), &grammar);
    assert!(streamed.kept.is_none());
    assert_eq!(streamed.item_count, 100_000);
    assert_eq!(
        walked(&streamed),
        walked(&outline_bytes(src.as_bytes(), &grammar))
    );
}

#[test]
fn cffi_definitions_are_named_as_cffi_names_them() {
    let name_and_sig = |src: &str| {
        let f = forms(src).remove(0);
        (
            f.name.as_deref().map(str::to_string),
            f.signature().to_string(),
        )
    };
    for (src, name, sig) in [
        (
            "(cffi:defcfun (\"close\" close-socket) :int (fd :int))",
            "close-socket",
            "(cffi:defcfun (\"close\" close-socket) :int (fd :int))",
        ),
        // cl+ssl: the C name differs by platform, the Lisp name does not.
        (
            "(cffi:defcfun (#-windows \"close\" #+windows \"closesocket\" close-socket) :int)",
            "close-socket",
            "(cffi:defcfun (#-windows \"close\" #+windows \"closesocket\" close-socket) ...)",
        ),
        (
            "(defcfun (%getpid \"getpid\") ...)",
            "%getpid",
            "(defcfun (%getpid \"getpid\") ...)",
        ),
        (
            "(defcfun \"SSL_CTX_new\" :pointer (method :pointer))",
            "ssl-ctx-new",
            "(defcfun \"SSL_CTX_new\" :pointer (method :pointer))",
        ),
        (
            "(defcfun (\"SSL_free\" :convention :stdcall) ...)",
            "ssl-free",
            "(defcfun (\"SSL_free\" :convention :stdcall) ...)",
        ),
        (
            "(defcvar \"errno\" :int)",
            "*errno*",
            "(defcvar \"errno\" :int)",
        ),
        (
            "(cffi:defcvar (\"errno\" *my-errno*) :int)",
            "*my-errno*",
            "(cffi:defcvar (\"errno\" *my-errno*) :int)",
        ),
    ] {
        assert_eq!(
            name_and_sig(src),
            (Some(name.to_string()), sig.to_string()),
            "{src}"
        );
    }
    // The name's place is folded as any part: a comment inside it is not shown (its
    // parenthesis would unbalance the line; found by the property test).
    assert_eq!(
        sig("(defcfun #(x #| a #| nested ( |# b |# x))"),
        "(defcfun #(x x))"
    );
    // A string that is no C identifier is not translated: the name stays as written.
    let f = forms("(defcfun \"a b\" :int)").remove(0);
    assert_eq!(f.name.as_deref(), Some("\"a b\""));
}
