//! A macro's body that ends in a choice on a global variable of its file, builds lists
//! with `make-list` and `setf` of `elt`, and writes them with `map 'list` and `mapcan`
//! (clx's `def-clx-class`, reduced).

use super::tests::names_with_functions;

/// `def-clx-class`, its structure of the real one: the `defclass` branch is taken when
/// the variable is `t` (as SBCL's `#+sbcl` branch sets it).
fn clx_class(value: &str, assignment: &str) -> String {
    format!(
        "(eval-when (:compile-toplevel :load-toplevel :execute)
  (defvar *use-defclass* {value} \"Whether to use DEFCLASS.\"))
{assignment}
(defmacro def-clx-class ((name &rest options) &body slots)
  (if (or (not (listp *use-defclass*)) (member name *use-defclass*))
      (let ((clos-package (find-package :common-lisp)) (constructor t) (copier t))
        (dolist (option options)
          (ecase (pop option)
            (:constructor (setf constructor (pop option)))
            (:copier (setf copier (pop option)))))
        (flet ((cintern (&rest symbols)
                 (intern (apply #'concatenate 'simple-string (mapcar #'symbol-name symbols))
                         *package*))
               (kintern (symbol) (intern (symbol-name symbol) (find-package :keyword)))
               (closintern (symbol) (intern (symbol-name symbol) clos-package)))
          (when (eq constructor t) (setf constructor (cintern 'make- name)))
          (when (eq copier t) (setf copier (cintern 'copy- name)))
          (let* ((n-slots (length slots))
                 (slot-names (make-list n-slots))
                 (slot-types (make-list n-slots)))
            (dotimes (i n-slots)
              (let ((slot (elt slots i)))
                (setf (elt slot-names i) (pop slot))
                (pop slot)
                (setf (elt slot-types i) (getf slot :type t))))
            `(progn
               (,(closintern 'defclass) ,name ()
                (,@(map 'list #'(lambda (slot-name slot-type)
                                  `(,slot-name :type ,slot-type
                                    :accessor ,(cintern name '- slot-name)
                                    :initarg ,(kintern slot-name)))
                        slot-names slot-types)))
               (defun ,constructor (&rest args) (apply #'make-instance ',name args))
               ,(when copier
                  `(defmethod ,copier ((object ,name))
                     (make-instance ',name ,@(mapcan #'(lambda (s) `(,(kintern s) nil))
                                                     slot-names))))))))
      `(defstruct (,name ,@options) ,@slots)))"
    )
}

const CALL: &str = "(def-clx-class (pixel-map (:copier nil)) (id 0 :type fixnum) (depth 1))";

#[test]
fn a_global_variable_of_the_macros_file_decides_its_branch() {
    let names = names_with_functions(&clx_class("t", ""), CALL);
    assert_eq!(
        names,
        [
            "defclass pixel-map",
            "accessor pixel-map-id",
            "setf-accessor (setf pixel-map-id)",
            "accessor pixel-map-depth",
            "setf-accessor (setf pixel-map-depth)",
            "defun make-pixel-map",
        ]
    );
    // A list of type names the class is not in: the structure.
    let names = names_with_functions(&clx_class("'(window)", ""), CALL);
    assert!(
        names.contains(&"defstruct pixel-map".to_string()),
        "{names:?}"
    );
    assert!(
        names.contains(&"accessor pixel-map-id".to_string()),
        "{names:?}"
    );
    assert!(
        !names.contains(&"defclass pixel-map".to_string()),
        "{names:?}"
    );
}

#[test]
fn an_assigned_or_undecided_global_variable_is_unknown() {
    for assignment in [
        "(setf *use-defclass* nil)",
        "(defun f () (setq *use-defclass* '(window)))",
        "(push 'window *use-defclass*)",
        "(let ((*use-defclass* nil)) (load \"x\"))",
    ] {
        assert_eq!(
            names_with_functions(&clx_class("t", assignment), CALL),
            Vec::<String>::new(),
            "{assignment}"
        );
    }
    // Two feature branches both read (no features given): not a constant.
    assert_eq!(
        names_with_functions(&clx_class("#+sbcl t #+cmu nil", ""), CALL),
        Vec::<String>::new()
    );
}

#[test]
fn the_copier_branch_is_written_when_asked() {
    let call = "(def-clx-class (gc) (id 0))";
    let names = names_with_functions(&clx_class("t", ""), call);
    assert!(
        names.contains(&"defmethod copy-gc".to_string()),
        "{names:?}"
    );
}

#[test]
fn a_variable_defined_twice_in_the_file_is_unknown() {
    let source = clx_class("t", "(defparameter *use-defclass* nil)");
    assert_eq!(names_with_functions(&source, CALL), Vec::<String>::new());
}

/// clx's `check-put`, reduced: the branch taken on `(null (macroexpand ...))` of a project
/// macro whose expansion is `nil` while a global variable of its file is.
const CHECKED: &str = "(defvar *type-check* nil)
(defmacro type-check (value type)
  (when *type-check*
    `(typep ,value ',type)))
(defmacro def-put (name type &environment env)
  (if (null (macroexpand `(type-check ,name ,type) env))
      `(defun ,(symbolicate name '-fast-put) (x) x)
      `(defun ,(symbolicate name '-checked-put) (x) (type-check x ,type) x)))
(defmacro def-put-1 (name &environment env)
  `(defun ,(if (equal (macroexpand-1 `(car ,name) env) `(car ,name))
               (symbolicate name '-unchanged)
               (symbolicate name '-changed))
       ()))
(defmacro def-put-2 (name &environment env)
  (if (macroexpand `(when ,name) env) `(defun ,name ()) `(defvar ,name)))
(defmacro again (name &environment env)
  (if (macroexpand `(again ,name) env) `(defun ,name ()) `(defvar ,name)))";

#[test]
fn macroexpand_expands_with_the_scopes_macros() {
    assert_eq!(
        names_with_functions(CHECKED, "(def-put card32 integer)"),
        ["defun card32-fast-put"]
    );
    let checking = CHECKED.replace("(defvar *type-check* nil)", "(defvar *type-check* t)");
    assert_eq!(
        names_with_functions(&checking, "(def-put card32 integer)"),
        ["defun card32-checked-put"]
    );
    // A function's call is no macro's: unchanged.
    assert_eq!(
        names_with_functions(CHECKED, "(def-put-1 card32)"),
        ["defun card32-unchanged"]
    );
    // A macro that is not the scope's (`when` is Common Lisp's) expands as the
    // implementation does: unknown, so no branch is taken.
    assert!(names_with_functions(CHECKED, "(def-put-2 card32)").is_empty());
    // A macro asking for its own expansion ends, unknown.
    assert!(names_with_functions(CHECKED, "(again card32)").is_empty());
}

/// The `memmem` search for the assigned names gives what the pass over every word
/// gives, over texts mixing names, assigning operators, delimiters and near misses.
#[test]
fn assigned_by_search_is_assigned_by_words() {
    use super::globals::{assigned, assigned_by_words};
    let names: std::collections::HashSet<&str> = ["*a*", "*ab*", "b", "a-b"].into_iter().collect();
    let pieces = [
        "(", ")", " ", "\n", "'", "`", ",", "setf", "setq", "push", "pushnew", "let", "let*",
        "pop", "*a*", "*ab*", "b", "a-b", "x", "*a*b", ";", "\"", "incf",
    ];
    // A fixed linear congruential sequence: the same texts on every run.
    let mut seed = 7u64;
    let mut found = 0;
    for _ in 0..3000 {
        let mut text = String::new();
        for _ in 0..12 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            text.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
        }
        let lower = text.to_ascii_lowercase();
        let by_words = assigned_by_words(lower.as_bytes(), &names);
        assert_eq!(assigned(lower.as_bytes(), &names), by_words, "{text:?}");
        found += by_words.len();
    }
    assert!(found > 50, "{found}");
}
