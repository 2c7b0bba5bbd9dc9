use super::*;

pub(super) fn val(text: &str) -> Val {
    read_form(text.as_bytes(), 0, text.len(), &|_, _| true).unwrap()
}

fn text(v: &Val) -> String {
    let mut out = String::new();
    print(v, &mut out);
    out
}

fn macros(source: &str) -> Macros {
    let mut m = Macros::default();
    m.extend(learn(source.as_bytes(), &|_, _| true));
    m
}

/// The expansion of `call` with the macros of `source`, as text.
fn expansion(source: &str, call: &str) -> Option<String> {
    let global = macros(source);
    let form = val(call);
    let m = global.get(form.head()?)?.clone();
    let lookup = Lookup {
        global: &global,
        locals: &[],
    };
    expand(&m, &form, &lookup, &mut Budget::new(MAX_EXPANSION_STEPS)).map(|v| text(&v))
}

fn names(source: &str, call: &str) -> Vec<String> {
    let global = macros(source);
    let form = val(call);
    let m = global.get(form.head().unwrap()).unwrap().clone();
    let lookup = Lookup {
        global: &global,
        locals: &[],
    };
    let v = expand(&m, &form, &lookup, &mut Budget::new(MAX_EXPANSION_STEPS)).unwrap();
    made(
        &v,
        &Grammar::builtin(),
        &mut Budget::new(MAX_EXPANSION_STEPS),
    )
    .into_iter()
    .map(|m| format!("{} {}", m.kind, m.name))
    .collect()
}

/// Reading an expansion's definitions prints and outlines it again: its text is charged
/// ([`super::PRINTED_BYTES_PER_STEP`] bytes a step), and an expansion whose text is more than the budget left makes nothing
/// and says the budget ran short.
#[test]
fn an_expansions_text_is_charged_to_the_budget() {
    let v = val("(progn (defvar a-v) (defvar b-v) (defvar c-v))");
    let grammar = Grammar::builtin();
    let printed = text(&v).len();
    let mut budget = Budget::new(10_000);
    let made_names: Vec<String> = made(&v, &grammar, &mut budget)
        .into_iter()
        .map(|m| m.name)
        .collect();
    assert_eq!(made_names, ["a-v", "b-v", "c-v"]);
    let charge = printed.div_ceil(super::PRINTED_BYTES_PER_STEP);
    assert!(
        10_000 - budget.steps >= charge,
        "{} steps",
        10_000 - budget.steps
    );
    let mut short = Budget::new(charge - 1);
    assert!(made(&v, &grammar, &mut short).is_empty());
    assert!(short.ran_short);
}

#[test]
fn data_read_and_printed_back() {
    let v = val("(a \"s\\\"x\" 12 #\\c :k p::q `(b ,c ,@d) 'e #'f (g . h) #(1 2) #:u |Foo Bar|)");
    assert_eq!(
        text(&v),
        "(a \"s\\\"x\" 12 #\\c :k p::q `(b ,c ,@d) 'e #'f (g . h) |\u{1}| #:u |foo bar|)"
    );
}

#[test]
fn depth_past_the_limit_is_unknown() {
    let deep = format!("{}x{}", "(".repeat(200), ")".repeat(200));
    let v = val(&deep);
    let mut depth = 0;
    let mut n = &v;
    while let Val::List(items) = n {
        depth += 1;
        n = &items[0];
    }
    assert_eq!(depth, datum::MAX_DEPTH);
    assert_eq!(*n, Val::Unknown);
}

#[test]
fn lambda_list_required_optional_rest_key_nested() {
    let source = "(defmacro m ((name &optional (suffix 'x)) a &key (k 'dflt) ((:other o)) &rest r)
                    `(progn (defun ,name () ,a) (defvar ,suffix) (defvar ,k) (defvar ,o) (defparameter *r* ',r)))";
    assert_eq!(
        expansion(source, "(m (foo) 1 :other bar)").unwrap(),
        "(progn (defun foo () 1) (defvar x) (defvar dflt) (defvar bar) (defparameter *r* '(:other bar)))"
    );
    assert_eq!(
        expansion(source, "(m (foo y) 1 :k kk)").unwrap(),
        "(progn (defun foo () 1) (defvar y) (defvar kk) (defvar nil) (defparameter *r* '(:k kk)))"
    );
    // Too few arguments: SBCL signals an error, nothing is made.
    assert_eq!(expansion(source, "(m)"), None);
}

#[test]
fn lambda_list_whole_environment_body_and_dotted() {
    let source = "(defmacro m (&whole w &environment e name . body)
                    (declare (ignore e))
                    \"doc\"
                    `(defun ,name () ',w ,@body))";
    assert_eq!(
        expansion(source, "(m f 1 2)").unwrap(),
        "(defun f () '(m f 1 2) 1 2)"
    );
    let too_many = "(defmacro n (a) `(defun ,a ()))";
    assert_eq!(expansion(too_many, "(n f g)"), None);
}

#[test]
fn builders_make_names() {
    let source = "(defmacro defthing (name)
                    (let* ((maker (symbolicate 'make- name))
                           (pred (intern (format nil \"~A-P\" name)))
                           (kw (make-keyword name))
                           (str (intern (concatenate 'string (symbol-name name) \"-STRING\")))
                           (fs (format-symbol t \"~:@(~A~)-count\" name)))
                      `(progn (defun ,maker ()) (defun ,pred (x) x) (defvar ,str ,kw)
                              (defun ,fs ()) (defun ,(string-upcase \"q\") ()))))";
    // A string is no name: `(defun "Q" ())` defines nothing.
    assert_eq!(
        names(source, "(defthing point)"),
        [
            "defun make-point",
            "defun point-p",
            "defvar point-string",
            "defun point-count",
        ]
    );
}

#[test]
fn an_unknown_call_makes_no_name_but_keeps_the_others() {
    let source = "(defmacro m (name) `(progn (defun ,(compute name) ()) (defun ,name () ,(body))))";
    assert_eq!(names(source, "(m f)"), ["defun f"]);
    // A body whose value is not a template: not instantiable.
    let computed = "(defmacro n (name) (compute-it name `(defun ,name ())))";
    assert_eq!(expansion(computed, "(n f)"), None);
    // A choice between templates is the branch its test takes; unknown with the test.
    let chosen = "(defmacro n (name) (if name `(defun ,name ()) `(progn)))";
    assert_eq!(expansion(chosen, "(n f)").as_deref(), Some("(defun f ())"));
    let unknown = "(defmacro n (name) (if (compute name) `(defun ,name ()) `(progn)))";
    assert_eq!(expansion(unknown, "(n f)"), None);
    // A `loop` holding a template is an iteration of the evaluator (`eval/`): computed.
    let looped = "(defmacro n (name) (loop for x in (list name) collect `(defun ,x ()) into l finally (return `(progn ,@l))))";
    assert_eq!(
        expansion(looped, "(n f)").as_deref(),
        Some("(progn (defun f ()))")
    );
}

#[test]
fn structures_and_classes_in_expansions_derive_names() {
    let source = "(defmacro defrecord (name &rest slots)
                    `(defstruct (,name (:constructor ,(symbolicate '%make- name))) ,@slots))";
    assert_eq!(
        names(source, "(defrecord cell a)"),
        [
            "defstruct cell",
            "constructor %make-cell",
            "copier copy-cell",
            "predicate cell-p",
            "accessor cell-a",
            "setf-accessor (setf cell-a)"
        ]
    );
}

#[test]
fn macros_calling_macros_and_macrolet() {
    let source = "(defmacro def-one (n) `(defun ,(symbolicate n '-one) ()))
                  (defmacro def-two (a b) `(eval-when (:compile-toplevel) (def-one ,a) (def-one ,b)))";
    assert_eq!(
        names(source, "(def-two x y)"),
        ["defun x-one", "defun y-one"]
    );
    // A `macrolet` binding is a macro for the forms inside its body only.
    let form = val("(macrolet ((frob (n) `(defun ,(symbolicate 'frob- n) ()))) (frob a))");
    let locals = local_macros(&form);
    assert_eq!(locals.len(), 1);
    let global = Macros::default();
    let lookup = Lookup {
        global: &global,
        locals: &locals,
    };
    let call = val("(frob a)");
    let v = expand(&locals[0].1, &call, &lookup, &mut Budget::new(1000)).unwrap();
    assert_eq!(text(&v), "(defun frob-a ())");
    // A macrolet inside an expansion binds its body's calls.
    let outer = "(defmacro outer (n) `(macrolet ((in (x) `(defvar ,x))) (in ,n)))";
    // The inner template is a nested backquote: its comma is left for the inner macro.
    assert_eq!(names(outer, "(outer v)"), ["defvar v"]);
}

#[test]
fn recursion_stops_at_the_depth_limit() {
    // A macro expanding to a call of itself: followed MAX_MACRO_DEPTH deep, no further
    // (each level names its variable apart: one call's copies of a name are one).
    let source = "(defmacro loop-me (n) `(progn (defvar ,n) (loop-me ,(symbolicate n '-))))";
    let made = names(source, "(loop-me v)");
    assert_eq!(made.len(), MAX_MACRO_DEPTH);
    assert_eq!(
        made[MAX_MACRO_DEPTH - 1],
        format!("defvar v{}", "-".repeat(MAX_MACRO_DEPTH - 1))
    );
}

#[test]
fn budget_exhaustion_gives_nothing() {
    let source = "(defmacro m (a) `(progn (defun ,a ()) (defun ,a ()) (defun ,a ())))";
    let global = macros(source);
    let form = val("(m f)");
    let m = global.get("m").unwrap().clone();
    let lookup = Lookup {
        global: &global,
        locals: &[],
    };
    assert!(expand(&m, &form, &lookup, &mut Budget::new(5)).is_none());
    assert!(expand(&m, &form, &lookup, &mut Budget::new(1000)).is_some());
}

#[test]
fn templates_that_multiply_stop_at_the_budget() {
    // Each level doubles the expansion: 2^depth copies; the budget ends it.
    let mut source = String::from("(defmacro m0 (x) `(defvar ,x))\n");
    for k in 1..=8 {
        source.push_str(&format!(
            "(defmacro m{k} (x) `(progn (m{} ,x) (m{} ,x)))\n",
            k - 1,
            k - 1
        ));
    }
    let global = macros(&source);
    let form = val("(m8 v)");
    let m = global.get("m8").unwrap().clone();
    let lookup = Lookup {
        global: &global,
        locals: &[],
    };
    let mut budget = Budget::new(2_000);
    assert!(expand(&m, &form, &lookup, &mut budget).is_none());
}

#[test]
fn learning_reads_only_defmacro_forms_with_templates() {
    let source = "(defun f ()) (eval-when () (defmacro a (x) `(defun ,x ())))
                  (defmacro b (x) (list 'defun x nil)) '(defmacro c (x) `(,x))
                  (defmacro with-x (&body body) `(let ((x 1)) ,@body))";
    let learned = learn(source.as_bytes(), &|_, _| true);
    let names: Vec<(&str, bool)> = learned
        .iter()
        .map(|(n, m)| (n.as_str(), m.defines))
        .collect();
    // `b` has no template; `c` is quoted data.
    assert_eq!(names, [("a", true), ("with-x", false)]);
}

#[test]
fn local_functions_of_the_body_make_names() {
    // alexandria's types.lisp, shortened: names made by `flet` functions that `push`.
    let form = val("(macrolet
        ((frob (type &optional (base-type type))
           (let ((subtype-names (list)))
             (flet ((make-subtype-name (format-control)
                      (let ((result (format-symbol :alexandria format-control
                                                   (symbol-name type))))
                        (push result subtype-names)
                        result)))
               (let* ((negative-name (make-subtype-name '#:negative-~a))
                      (zero))
                 (setf (values zero) (ecase type (fixnum (values 0))))
                 `(progn
                    (deftype ,negative-name () `(,',base-type * ,',zero))
                    (declaim (inline ,@subtype-names))
                    (defun ,(format-symbol :alexandria '#:~A-p negative-name) (n)
                      (and (typep n ',type) (< n ,zero)))))))))
        (frob fixnum integer))");
    let locals = local_macros(&form);
    let global = Macros::default();
    let lookup = Lookup {
        global: &global,
        locals: &locals,
    };
    let v = expand(
        &locals[0].1,
        &val("(frob fixnum integer)"),
        &lookup,
        &mut Budget::new(10_000),
    )
    .unwrap();
    let names: Vec<String> = made(
        &v,
        &Grammar::builtin(),
        &mut Budget::new(MAX_EXPANSION_STEPS),
    )
    .into_iter()
    .map(|m| format!("{} {}", m.kind, m.name))
    .collect();
    assert_eq!(
        names,
        [
            "deftype alexandria::negative-fixnum",
            "defun alexandria::negative-fixnum-p"
        ]
    );
}

#[test]
fn shapes_say_which_names_a_macro_can_build() {
    let learned = macros(
        "(defmacro a (n) (let ((maker (symbolicate '#:make- n))) `(defun ,maker ())))
         (defmacro b (n) `(defun ,(format-symbol t \"~A-P\" n) ()))
         (defmacro c (n) `(defun ,n ()))
         (defmacro d (n) `(defun ,(helper n) ()))
         (defmacro e (n) `(defstruct ,n))",
    );
    let may = |m: &str, name: &str| learned.get(m).unwrap().shape.may_build(name);
    assert!(may("a", "make-point") && !may("a", "point-p"));
    assert!(may("b", "point-p") && !may("b", "make-box"));
    // A parameter's name is spelled by the call; a helper's result is unknown: neither
    // builds a name (a search looks at their calls only where they spell it).
    assert!(!learned.get("c").unwrap().builds);
    assert!(!learned.get("d").unwrap().builds);
    // A structure's derived names: any.
    assert!(may("e", "make-point") && learned.get("e").unwrap().builds);
}

/// The macros of `source` and the project functions they call, learned as a search
/// learns them (rounds of helpers calling helpers).
pub(super) fn macros_and_functions(source: &str) -> Macros {
    let mut m = macros(source);
    let mut wanted = m.wanted_functions();
    for _ in 0..functions::MAX_ROUNDS {
        let found = functions::learn(source.as_bytes(), &wanted, &|_, _| true);
        wanted = m.add_functions(found);
    }
    m.finish();
    m
}

/// The definitions the expansion of `call` makes, with the functions of `source`.
pub(super) fn names_with_functions(source: &str, call: &str) -> Vec<String> {
    made_names(&macros_and_functions(source), call)
}

/// The definitions the expansion of `call` makes with the macros `global`.
pub(super) fn made_names(global: &Macros, call: &str) -> Vec<String> {
    let form = val(call);
    let m = global.get(form.head().unwrap()).unwrap().clone();
    let lookup = Lookup {
        global,
        locals: &[],
    };
    match expand(&m, &form, &lookup, &mut Budget::new(MAX_EXPANSION_STEPS)) {
        Some(v) => made(
            &v,
            &Grammar::builtin(),
            &mut Budget::new(MAX_EXPANSION_STEPS),
        )
        .into_iter()
        .map(|m| format!("{} {}", m.kind, m.name))
        .collect(),
        None => Vec::new(),
    }
}

/// cl-postgres' `integer-reader`: a name computed by a project function (`if` on a known
/// value, `with-standard-io-syntax`, uninterned symbols' names).
const NAME_HELPER: &str = "(eval-when (:compile-toplevel :load-toplevel :execute)
  (defun reader-name (bytes signed)
    (intern (with-standard-io-syntax
              (format nil \"~a~a~a~a\" '#:read- (if signed \"\" '#:u) '#:int bytes)))))
(defmacro integer-reader (bytes)
  (let ((bits (* bytes 8)))
    (labels ((generate (signed)
               `(defun ,(reader-name bytes signed) (socket) (read-bits socket ,bits))))
      `(progn ,(generate nil) ,(generate t)))))";

#[test]
fn project_functions_compute_names() {
    assert_eq!(
        names_with_functions(NAME_HELPER, "(integer-reader 4)"),
        ["defun read-uint4", "defun read-int4"]
    );
    // Without the function learned, the name is unknown (as before functions were).
    assert_eq!(
        names(NAME_HELPER, "(integer-reader 4)"),
        Vec::<String>::new()
    );
    // Its calls may build names their text does not spell.
    let m = macros_and_functions(NAME_HELPER);
    assert!(m.get("integer-reader").unwrap().builds);
    assert_eq!(m.definer_names(), ["integer-reader"]);
}

/// usocket's `define-usocket-condition-classes`: `mapcar` of a `lambda` over an argument,
/// `apply` of a project function whose body is a template.
const MAPPED: &str = "(eval-when (:compile-toplevel :load-toplevel :execute)
  (defun define-one-class (class &rest parents)
    `(progn (define-condition ,class ,parents ())
            (export ',class))))
(defmacro define-classes (class-list parents)
  `(progn ,@(mapcar #'(lambda (x) (apply #'define-one-class x parents)) class-list)))
(defmacro define-named (names)
  `(progn ,@(mapcar 'define-one-class names)
          ,@(when nil `((defun never ())))
          ,@(unless nil (list `(defvar ,(funcall #'symbolicate (first names) '-count))))))";

#[test]
fn mapcar_and_apply_of_project_functions_and_lambdas() {
    assert_eq!(
        names_with_functions(MAPPED, "(define-classes (a-error b-error) (socket-error))"),
        ["define-condition a-error", "define-condition b-error"]
    );
    // `first` is computed (`eval/lists.rs`); `when nil` splices nothing.
    assert_eq!(
        names_with_functions(MAPPED, "(define-named (x y))"),
        ["define-condition x", "define-condition y", "defvar x-count"]
    );
}

#[test]
fn project_functions_see_no_variable_of_their_caller_and_compute_nothing_else() {
    let source = "(defun leaky (x) (symbolicate x parents))
(defun effectful (x) (gethash x *names*))
(defmacro def-leaky (name parents) `(defun ,(leaky name) () ',parents))
(defmacro def-effect (name) `(defun ,(effectful name) ()))";
    // `parents` is the macro's variable, free in the function: unknown there.
    assert_eq!(
        names_with_functions(source, "(def-leaky a (b))"),
        Vec::<String>::new()
    );
    assert_eq!(
        names_with_functions(source, "(def-effect a)"),
        Vec::<String>::new()
    );
}

#[test]
fn recursive_project_functions_stop_at_the_budget() {
    let source = "(defun twice (x) (list (twice x) (twice x)))
(defmacro def-twice (name) `(progn (defun ,name ()) (defvar *v* ',(twice name))))";
    let global = macros_and_functions(source);
    let form = val("(def-twice a)");
    let m = global.get("def-twice").unwrap().clone();
    let lookup = Lookup {
        global: &global,
        locals: &[],
    };
    let mut budget = Budget::new(MAX_EXPANSION_STEPS);
    // The recursion ends: at the depth limit or with the budget spent.
    let _ = expand(&m, &form, &lookup, &mut budget);
    assert!(budget.steps < MAX_EXPANSION_STEPS);
}

#[test]
fn called_names_are_those_computed_not_those_a_template_writes() {
    let body = [val(
        "(let ((n (helper x))) `(progn (defun ,n () (runtime-call)) ,@(mapcar 'other xs) #',(third y)))",
    )];
    let mut called: Vec<String> = functions::called(&body).into_iter().collect();
    called.sort();
    // A `let` binding `(n ...)` reads as a call of `n`: more names looked for, none missed.
    assert_eq!(called, ["helper", "let", "mapcar", "n", "other", "third"]);
}

#[test]
fn recursive_local_functions_stop_at_the_depth_limit() {
    // Each call of `f` is a call deeper: the depth, not the stack, ends it.
    let source = "(defmacro def-self (name)
  (labels ((f (x) (symbolicate (f x) x)))
    `(progn (defun ,name ()) (defvar ,(f name)))))";
    assert_eq!(names(source, "(def-self a)"), ["defun a"]);
}

/// The bytes an expansion's text may hold: what its steps can make, with slack.
const MAX_EXPANSION_TEXT: usize = 2 * datum::TEXT_BYTES_PER_NODE * MAX_EXPANSION_STEPS;

#[test]
fn names_built_of_names_cost_their_bytes() {
    // Each level makes a name of 50 copies of its argument's: 50^4 times the call's
    // 10 bytes at level 4 (62 MB, and 3 GB at level 5) if bytes were free.
    let args = vec!["n"; 50].join(" ");
    let mut source = String::from("(defmacro a0 (n) `(defun ,n ()))\n");
    for k in 1..=4 {
        source.push_str(&format!(
            "(defmacro a{k} (n) `(a{} ,(symbolicate {args})))\n",
            k - 1
        ));
    }
    for k in 1..=4 {
        let text = expansion(&source, &format!("(a{k} \"xxxxxxxxxx\")"));
        let bytes = text.map_or(0, |t| t.len());
        assert!(bytes <= MAX_EXPANSION_TEXT, "a{k}: {bytes} bytes");
    }
    // A name of ordinary length is still built.
    assert_eq!(
        expansion(&source, "(a1 x)").unwrap().len(),
        "(defun  ())".len() + 50
    );
}

#[test]
fn copies_of_a_long_argument_cost_their_bytes() {
    // 2,000 copies of a 50 KB string: 100 MB if a copy cost one step whatever its length.
    let copies = vec![",n"; 2000].join(" ");
    let source = format!("(defmacro a (n) `(progn (defun ,(symbolicate n) ()) {copies}))");
    let call = format!("(a \"{}\")", "x".repeat(50_000));
    let bytes = expansion(&source, &call).map_or(0, |t| t.len());
    assert!(bytes <= MAX_EXPANSION_TEXT, "{bytes} bytes");
    // A few copies are made.
    let few = "(defmacro a (n) `(progn (defun ,(symbolicate n) ()) ,n ,n))";
    assert!(expansion(few, &call).is_some());
}

#[test]
fn a_definition_one_call_makes_twice_is_made_once() {
    // 2^3 copies of `(defun x ())` from one call, and a structure defined twice.
    let source = "(defmacro m0 (x) `(progn (defun ,x ()) (defstruct ,x)))
                  (defmacro m1 (x) `(progn (m0 ,x) (m0 ,x)))
                  (defmacro m2 (x) `(progn (m1 ,x) (m1 ,x)))
                  (defmacro m3 (x) `(progn (m2 ,x) (m2 ,x) (defun other ())))";
    let mut made = names(source, "(m3 x)");
    let all = made.len();
    made.sort();
    made.dedup();
    assert_eq!(all, made.len(), "{made:?}");
    assert!(made.contains(&"defun x".to_string()) && made.contains(&"defun other".to_string()));
}

/// A name longer than any written one is the product of a loop that doubles a string,
/// not a definition: it is not made (a call of 300 bytes made a 98 kB name).
#[test]
fn a_name_past_the_longest_written_is_not_made() {
    let source = "(defmacro big (x)
  (let ((s (symbol-name x)))
    (dotimes (i 14) (setq s (concatenate 'string s s)))
    `(progn (defun ,(intern s) ()) (defun ,(intern (format nil \"~A-SHORT\" x)) ()))))";
    let made: Vec<usize> = names(source, "(big abcdef)")
        .iter()
        .map(String::len)
        .collect();
    assert_eq!(made, ["defun abcdef-short".len()]);
}

/// `~A`, `~D` and `symbolicate` print an integer as its decimal value: the reader's
/// `#x10`, `1.`, `+5` and `#b101` are 16, 1, 5 and 5, never their text (which made
/// `|foo-#x10|`, `bar-1.`). Not computed here (the call's text does not spell the
/// value, which a search by name requires), they are unknown: no name is made.
#[test]
fn an_integer_written_otherwise_than_in_decimal_makes_no_name_of_its_text() {
    let source = "(defmacro def-n (x n) `(defun ,(intern (format nil \"~A-~D\" x n)) ()))
(defmacro sym-n (x n) `(defun ,(symbolicate x '- n) ()))";
    let written = [
        "#x10",
        "1.",
        "+5",
        "#b101",
        "#8r17",
        "007",
        "#xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF",
    ];
    for n in written {
        assert_eq!(
            names(source, &format!("(def-n foo {n})")),
            Vec::<String>::new(),
            "{n}"
        );
        assert_eq!(
            names(source, &format!("(sym-n foo {n})")),
            Vec::<String>::new(),
            "{n}"
        );
    }
    assert_eq!(names(source, "(def-n foo 16)"), ["defun foo-16"]);
    assert_eq!(names(source, "(def-n foo -3)"), ["defun foo--3"]);
    assert_eq!(names(source, "(sym-n foo 7)"), ["defun foo-7"]);
}

/// `format-symbol` in the package a symbol's `symbol-package` gives (fiveam's
/// `def-special-environment`): the file's package, or the keywords.
#[test]
fn a_name_made_in_a_symbols_package_is_in_that_package() {
    let source = "(defmacro def-env (name)
  `(progn (defmacro ,(format-symbol (symbol-package name) \"~A-~A\" '#:with name) ())
          (defvar ,(format-symbol (symbol-package :k) \"~A\" name))))";
    assert_eq!(
        names(source, "(def-env run-state)"),
        ["defmacro with-run-state", "defvar :run-state"]
    );
}
