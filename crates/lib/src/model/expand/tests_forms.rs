//! Forms of macros' computing code met on systems outside the oracle's set: multiple
//! values, `format`'s iteration, loop destructuring, functions of the evaluator given to
//! `mapcar`.

use super::tests::names_with_functions;

/// lparallel's `defslots`: the names come from a project function's `values`, taken apart
/// by `multiple-value-bind`; the conc-name is `(format-symbol nil "~{~a~}" ...)`; the
/// slots are `(mapcar #'ensure-list slots)`, read by a destructuring `loop`.
const DEFSLOTS: &str = "(defun slots-names (name)
  (values (symbolicate '#:make- name '#:-instance)
          (symbolicate '#:with- name '#:-slots)
          (symbolicate/no-intern '#:%%%%. name '#:.)))
(defun symbolicate/no-intern (&rest string-designators)
  (format-symbol nil \"~{~a~}\" string-designators))
(defmacro define-struct (name slots conc-name constructor)
  `(defstruct (,name (:conc-name ,conc-name) (:constructor ,constructor))
     ,@(loop for (slot-name . plist) in slots
             collect `(,slot-name ,(getf plist :initform)))))
(defmacro %defslots (name slots)
  (multiple-value-bind (constructor slots-macro-name conc-name) (slots-names name)
    `(progn
       (define-struct ,name ,slots ,conc-name ,constructor)
       (defmacro ,slots-macro-name (instance &body body) `(progn ,instance ,@body)))))
(defmacro defslots (name slots)
  (setf slots (mapcar #'ensure-list slots))
  `(%defslots ,name ,slots))";

#[test]
fn multiple_values_format_iteration_and_loop_destructuring_make_names() {
    let names = names_with_functions(DEFSLOTS, "(defslots task (fn (state :initform 0)))");
    for expected in [
        "defstruct task",
        "constructor make-task-instance",
        "defmacro with-task-slots",
        "accessor %%%%.task.fn",
        "accessor %%%%.task.state",
        "setf-accessor (setf %%%%.task.state)",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} not in {names:?}"
        );
    }
}

#[test]
fn multiple_value_bind_takes_the_values_of_its_form_only() {
    let source = "(defun two (x) (values (symbolicate x '#:-a) (symbolicate x '#:-b)))
(defmacro tail (x)
  (multiple-value-bind (a b c) (two x) `(progn (defun ,a ()) (defun ,b ()) (defvar ,c))))
(defmacro not-tail (x)
  (multiple-value-bind (a b) (progn (two x) (symbolicate x '#:-z))
    `(progn (defun ,a ()) (defun ,b ()))))
(defmacro inner (x)
  (multiple-value-bind (a b) (list (two x)) `(progn (defun ,(car a) ()) (defun ,b ()))))";
    // A variable past the values is nil: `(defvar nil)` names nothing SBCL would make.
    assert_eq!(
        names_with_functions(source, "(tail f)"),
        ["defun f-a", "defun f-b", "defvar nil"]
    );
    // The form's value is not a `values`': the first variable is it, the others unknown.
    assert_eq!(names_with_functions(source, "(not-tail f)"), ["defun f-z"]);
    assert_eq!(names_with_functions(source, "(inner f)"), ["defun f-a"]);
}

#[test]
fn format_iterates_over_a_list_argument() {
    let source = "(defmacro joined (&rest parts)
  `(progn (defun ,(intern (format nil \"~{~a~^-~}\" parts)) ())
          (defun ,(format-symbol t \"~a~{/~a~}\" 'p parts) ())))";
    assert_eq!(
        names_with_functions(source, "(joined a b c)"),
        ["defun a-b-c", "defun p/a/b/c"]
    );
    // Nested iteration, `~:{` and a body that takes no element are not computed (the
    // last would repeat forever).
    let odd = "(defmacro odd (&rest parts)
  `(progn (defun ,(format-symbol t \"~{~{~a~}~}\" parts) ())
          (defun ,(format-symbol t \"~:{~a~}\" parts) ())
          (defun ,(format-symbol t \"x~{y~}\" parts) ())))";
    assert_eq!(names_with_functions(odd, "(odd (a) (b))"), ["defun xy"]);
}

#[test]
fn a_format_iteration_stops_at_its_length_bound() {
    // A long control text repeated for each element of a long list would make their
    // product: past the bound (64 KiB) the text is not computed. Its length is made into
    // the name, so the name stays short (a made name's own bound is 1 kB) and says
    // whether the text was computed.
    let control = "x".repeat(300);
    let source = [
        "(defmacro wide (&rest parts) `(defun ,(format-symbol t \"N~D\" (length (format nil \"~{",
        &control,
        "~a~}\" parts))) ()))",
    ]
    .concat();
    let call = format!("(wide {})", "a ".repeat(300));
    assert_eq!(names_with_functions(&source, &call), Vec::<String>::new());
    let call = format!("(wide {})", "a ".repeat(3));
    assert_eq!(names_with_functions(&source, &call), ["defun n903"]);
}

#[test]
fn a_package_held_by_a_global_variable_is_the_current_one() {
    // clx's `xintern`: the package is `*xlib-package*`, which nothing here computes; the
    // name is known all the same.
    let source = "(defun xintern (&rest parts)
  (intern (apply #'concatenate 'string (mapcar #'string parts)) *xlib-package*))
(defmacro define-accessor (name)
  `(progn (defun ,(xintern name '-get) ())
          (defun ,(format-symbol *xlib-package* \"~a-PUT\" name) ())))";
    assert_eq!(
        names_with_functions(source, "(define-accessor card32)"),
        ["defun card32-get", "defun card32-put"]
    );
}
