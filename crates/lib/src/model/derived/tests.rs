use super::*;
use crate::grammar::Grammar;
use crate::outline::outline_bytes;

/// `(kind, name, text of the slot or option)` of every name the first form makes.
fn derived_of(source: &str) -> Vec<(&'static str, String, String)> {
    let grammar = Grammar::builtin();
    let outline = outline_bytes(source.as_bytes(), &grammar);
    let form = outline.items[0].form.as_ref().expect("a form");
    derive(form)
        .derived
        .into_iter()
        .map(|d| (d.kind, d.name, source[d.start..d.end].to_string()))
        .collect()
}

fn names(source: &str) -> Vec<String> {
    derived_of(source)
        .into_iter()
        .map(|(k, n, _)| format!("{k} {n}"))
        .collect()
}

#[test]
fn a_plain_structure_makes_the_default_names() {
    assert_eq!(
        names("(defstruct point x (y 0 :read-only t))"),
        [
            "constructor make-point",
            "copier copy-point",
            "predicate point-p",
            "accessor point-x",
            "setf-accessor (setf point-x)",
            "accessor point-y",
        ]
    );
}

#[test]
fn a_slot_named_like_a_number_is_a_slot() {
    // chipz: `(100k-block-size 1 :type (integer 1 9))`.
    assert_eq!(
        names("(defstruct s (100k-block-size 1) 2 -3)")[3..],
        [
            "accessor s-100k-block-size",
            "setf-accessor (setf s-100k-block-size)"
        ]
    );
}

#[test]
fn structure_options_rename_or_remove_names() {
    let d = derived_of(
        "(defstruct (lexer (:constructor make-lexer-internal) (:conc-name lx-) (:copier nil)\n (:predicate lexerp)) \"Doc.\" str (len 0))",
    );
    let shown: Vec<String> = d.iter().map(|(k, n, _)| format!("{k} {n}")).collect();
    assert_eq!(
        shown,
        [
            "constructor make-lexer-internal",
            "predicate lexerp",
            "accessor lx-str",
            "setf-accessor (setf lx-str)",
            "accessor lx-len",
            "setf-accessor (setf lx-len)",
        ]
    );
    assert_eq!(d[0].2, "(:constructor make-lexer-internal)");
    assert_eq!(d[4].2, "(len 0)");
}

#[test]
fn conc_name_nil_boa_constructors_and_typed_structures() {
    assert_eq!(
        names("(defstruct (v (:conc-name nil) (:constructor) (:constructor v3 (a b c)) (:type vector)) a)"),
        [
            "constructor make-v",
            "constructor v3",
            "copier copy-v",
            "accessor a",
            "setf-accessor (setf a)",
        ]
    );
    assert_eq!(
        names("(defstruct (w (:type list) :named (:conc-name \"W.\") (:constructor nil)) a)"),
        [
            "copier copy-w",
            "predicate w-p",
            "accessor w.a",
            "setf-accessor (setf w.a)",
        ]
    );
    assert_eq!(
        names("(defstruct (u :conc-name) b)"),
        [
            "constructor make-u",
            "copier copy-u",
            "predicate u-p",
            "accessor b",
            "setf-accessor (setf b)",
        ]
    );
}

#[test]
fn included_slots_get_the_child_prefix() {
    let grammar = Grammar::builtin();
    let source = "(defstruct node id)\n(defstruct (leaf (:include node)) value)\n(defstruct (twig (:include leaf) (:conc-name node-)) x)";
    let outline = outline_bytes(source.as_bytes(), &grammar);
    let structures: Vec<Structure> = outline
        .items
        .iter()
        .filter_map(|i| derive(i.form.as_ref()?).structure)
        .collect();
    let mut got: Vec<String> = Vec::new();
    assert!(included(&structures, &mut |i, d| {
        got.push(format!(
            "{i} {} {} {}",
            d.kind,
            d.name,
            &source[d.start..d.end]
        ));
        std::ops::ControlFlow::Continue(())
    }));
    assert_eq!(
        got,
        [
            "1 accessor leaf-id (:include node)",
            "1 setf-accessor (setf leaf-id) (:include node)",
            "2 accessor node-value (:include leaf)",
            "2 setf-accessor (setf node-value) (:include leaf)",
        ]
    );
}

#[test]
fn an_include_cycle_stops() {
    let structures = vec![
        Structure {
            name: "a".into(),
            conc: "a-".into(),
            slots: vec![("x".into(), true)],
            include: Some(("b".into(), 0, 1)),
            redescribed: Vec::new(),
        },
        Structure {
            name: "b".into(),
            conc: "b-".into(),
            slots: vec![("y".into(), true)],
            include: Some(("a".into(), 0, 1)),
            redescribed: Vec::new(),
        },
    ];
    let mut got: Vec<(usize, String)> = Vec::new();
    included(&structures, &mut |i, d| {
        got.push((i, d.name));
        std::ops::ControlFlow::Continue(())
    });
    assert_eq!(got, [(0, "a-y".to_string()), (1, "b-x".to_string())]);
}

#[test]
fn class_slots_make_accessors_readers_and_writers() {
    assert_eq!(
        derived_of("(defclass c ()\n ((offset :initarg :offset :accessor offset)\n  (n :reader c-n :writer (setf c-n*) :reader other)\n  plain))"),
        [
            ("accessor", "offset".into(), "(offset :initarg :offset :accessor offset)".into()),
            ("setf-accessor", "(setf offset)".into(), "(offset :initarg :offset :accessor offset)".into()),
            ("reader", "c-n".into(), "(n :reader c-n :writer (setf c-n*) :reader other)".into()),
            ("writer", "(setf c-n*)".into(), "(n :reader c-n :writer (setf c-n*) :reader other)".into()),
            ("reader", "other".into(), "(n :reader c-n :writer (setf c-n*) :reader other)".into()),
        ]
    );
    // usocket: a value written for two implementations is one value.
    assert_eq!(
        names("(defclass s () ((element-type :initform #-lispworks 'character\n #+lispworks 'base-char :reader element-type)))"),
        ["reader element-type"]
    );
    assert_eq!(
        names("(defstruct q (a 0 :type #+sbcl fixnum #-sbcl integer :read-only t))"),
        [
            "constructor make-q",
            "copier copy-q",
            "predicate q-p",
            "accessor q-a"
        ]
    );
    assert_eq!(
        names("(define-condition bad (error) ((why :reader bad-why)))"),
        ["reader bad-why"]
    );
}

#[test]
fn generic_function_methods_setf_expanders_and_packages() {
    let grammar = Grammar::builtin();
    let source = "(defgeneric area (s) (:documentation \"x\") (:method :around ((s square) &key k) 1) (:method (s) 2))";
    let outline = outline_bytes(source.as_bytes(), &grammar);
    let keys: Vec<Option<String>> = derive(outline.items[0].form.as_ref().unwrap())
        .derived
        .into_iter()
        .map(|d| d.key)
        .collect();
    assert_eq!(
        keys,
        [
            Some("area :around (square)".to_string()),
            Some("area (t)".to_string())
        ]
    );
    assert_eq!(
        names("(defsetf lexer-pos set-lexer-pos)"),
        ["setf-expander (setf lexer-pos)"]
    );
    assert_eq!(
        names("(defpackage \"CL-PPCRE\" (:nicknames #:ppcre \"RE\") (:use :cl))"),
        ["package cl-ppcre", "nickname ppcre", "nickname re"]
    );
    assert!(names("(defpackage :cl-ppcre (:use :cl))").is_empty());
}

#[test]
fn malformed_forms_make_nothing_and_do_not_panic() {
    for source in [
        "(defstruct)",
        "(defstruct ())",
        "(defstruct (\"x\"))",
        "(defstruct 12 a)",
        "(defstruct p 1.5 -2 1/2)",
        "(defstruct (p (:include)) a)",
        "(defclass c () (()))",
        "(defclass c () ((a :accessor)))",
        "(defgeneric f (x) (:method))",
        "(defsetf)",
        "(defpackage)",
        "'(defstruct p a)",
    ] {
        let got = derived_of(source);
        assert!(
            got.iter().all(|(_, n, _)| !n.is_empty() && n != "make-"),
            "{source}: {got:?}"
        );
    }
    assert!(names("(defstruct)").is_empty());
    assert!(names("'(defstruct p a)").is_empty());
}

#[test]
fn many_structures_including_one_large_parent_stop_at_the_work_bound() {
    let parent = Structure {
        name: "p".into(),
        conc: "p-".into(),
        slots: (0..1000).map(|k| (format!("s{k}"), true)).collect(),
        include: None,
        redescribed: Vec::new(),
    };
    let child = |k: usize| Structure {
        name: format!("c{k}"),
        conc: format!("c{k}-"),
        slots: Vec::new(),
        include: Some(("p".into(), 0, 1)),
        redescribed: Vec::new(),
    };
    let mut structures = vec![parent];
    structures.extend((0..1000).map(child));
    let mut made = 0usize;
    let complete = included(&structures, &mut |_, _| {
        made += 1;
        std::ops::ControlFlow::Continue(())
    });
    assert!(!complete);
    assert!(made <= MAX_INCLUDE_DEPTH * 2001, "{made}");
    // A few children: every accessor.
    structures.truncate(4);
    let mut made = 0usize;
    assert!(included(&structures, &mut |_, _| {
        made += 1;
        std::ops::ControlFlow::Continue(())
    }));
    assert_eq!(made, 3 * 1000);
}

#[test]
fn brief_slots_make_names_from_their_flag_letters() {
    // cl-markdown's `defclass*` (metatilities): `a` accessor, `r`/`ir` reader, `ia`
    // accessor, `w` a writer; an initform alone makes nothing.
    assert_eq!(
        names(
            "(defclass* doc () ((chunks (make-container 'vector) r) (level 0 a)\n (parent nil ir) (dest nil ia) (sink nil w) (plain 3) (flagged ia)))"
        ),
        [
            "reader chunks",
            "accessor level",
            "setf-accessor (setf level)",
            "reader parent",
            "accessor dest",
            "setf-accessor (setf dest)",
            "writer (setf sink)",
        ]
    );
}

#[test]
fn brief_slots_keep_verbose_options_and_automatic_accessors() {
    // cl-containers: `(initial-container nil ir :initarg :container)`; quad-tree.lisp's
    // `:automatic-accessors` class option; an `:initform` given makes the first item
    // an option, not an initform.
    assert_eq!(
        names(
            "(defclass* it () ((initial nil ir :initarg :container) (size :initform 0 :accessor size-of)\n count (kept nil \"Doc.\" :reader kept-of)) (:automatic-accessors))"
        ),
        [
            "reader initial",
            "accessor size-of",
            "setf-accessor (setf size-of)",
            "accessor count",
            "setf-accessor (setf count)",
            "reader kept-of",
            "accessor kept",
            "setf-accessor (setf kept)",
        ]
    );
}

#[test]
fn a_docstring_before_brief_slots_moves_them() {
    assert_eq!(names("(defclass* d () \"Doc.\" ((x 1 r)))"), ["reader x"]);
}

/// `(kind name option-text)` of what [`included`] makes for the structures of `source`.
fn included_of(source: &str) -> Vec<String> {
    let grammar = Grammar::builtin();
    let outline = outline_bytes(source.as_bytes(), &grammar);
    let structures: Vec<Structure> = outline
        .items
        .iter()
        .filter_map(|i| derive(i.form.as_ref()?).structure)
        .collect();
    let mut got: Vec<String> = Vec::new();
    assert!(included(&structures, &mut |i, d| {
        got.push(format!("{i} {} {}", d.kind, d.name));
        std::ops::ControlFlow::Continue(())
    }));
    got
}

#[test]
fn slots_an_include_option_redescribes_are_made_with_an_unknown_parent() {
    // kmrcl's byte-stream.lisp: the parent is SBCL's, outside any scope; the slots the
    // option redescribes are the form's own words. A bare symbol after the parent may
    // be another `#+` branch's parent and makes nothing.
    let source = "(defstruct (out (:include #+cmu lisp-stream #+sbcl sb-sys:fd-stream (bout #'b) (misc #'m :read-only t)) (:constructor make-out ())) (index 0))";
    assert_eq!(
        included_of(source),
        [
            "0 accessor out-bout",
            "0 setf-accessor (setf out-bout)",
            "0 accessor out-misc",
        ]
    );
    // The form's own names are unchanged.
    assert_eq!(names(source).len(), 5);
}

#[test]
fn a_redescribed_slot_under_the_parents_conc_name_is_the_parents() {
    // closure-common's ystream.lisp: the same `:conc-name "YSTREAM-"` as the parent, so
    // `ystream-os-stream` is the parent's accessor, not made again.
    let source = "(defstruct (%ys (:conc-name \"YSTREAM-\")) (os-stream nil))\n(defstruct (s8 (:include %ys (os-stream (make-string-output-stream))) (:conc-name \"YSTREAM-\")))";
    assert!(included_of(source).is_empty(), "{:?}", included_of(source));
}

#[test]
fn a_redescribed_slot_of_a_known_parent_is_made_once() {
    let grammar = Grammar::builtin();
    let source = "(defstruct node id (kind 0))\n(defstruct (leaf (:include node (kind 1 :read-only t))) value)\n(defstruct (twig (:include leaf)) x)";
    let outline = outline_bytes(source.as_bytes(), &grammar);
    let structures: Vec<Structure> = outline
        .items
        .iter()
        .filter_map(|i| derive(i.form.as_ref()?).structure)
        .collect();
    let mut got: Vec<String> = Vec::new();
    assert!(included(&structures, &mut |i, d| {
        got.push(format!("{i} {} {}", d.kind, d.name));
        std::ops::ControlFlow::Continue(())
    }));
    // `leaf-kind` is read-only as the option redescribes it; `twig-kind` too, through
    // `leaf`; each comes once.
    assert_eq!(
        got,
        [
            "1 accessor leaf-id",
            "1 setf-accessor (setf leaf-id)",
            "1 accessor leaf-kind",
            "2 accessor twig-value",
            "2 setf-accessor (setf twig-value)",
            "2 accessor twig-id",
            "2 setf-accessor (setf twig-id)",
            "2 accessor twig-kind",
        ]
    );
}
