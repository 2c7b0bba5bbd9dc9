//! Macros writing macros (consfigurator's `define-property-defining-macro`, reduced): the
//! inner template is a nested backquote whose `,,name` the outer call fills in, and the
//! macro a call defines is learned from that call's expansion in the same file, then
//! its own calls expanded.

use super::tests::names_with_functions;
use super::{learn, Macros};

const DEFINING: &str = "(defmacro define-dotted (name args)
  (let ((unknown (parse-it args)))
    `(defmacro ,(format-symbol (symbol-package name) \"~A.\" name) ,args
       ,@(when unknown `((list ',name))))))
(defmacro define-defining-macro (mname (typev namev) &body mbody)
  (with-gensyms (body)
    `(defmacro ,mname (,namev ,typev &body ,body)
       (let ((slots (list :type ,typev :body `',,body)))
         ,@mbody
         `(progn
            (setprop ',,namev ,@,'slots)
            (define-dotted ,,namev (x y))
            (defun ,,namev (&rest args) args))))))
(define-defining-macro defprop (type name)
  (setf slots (parse-it slots)))";

#[test]
fn a_macro_defined_by_a_call_in_its_file_is_learned_with_its_inner_commas() {
    let mut macros = Macros::default();
    macros.extend(learn(DEFINING.as_bytes(), &|_, _| true));
    assert!(macros.get("defprop").is_some());
    let names = names_with_functions(DEFINING, "(defprop deploys :posix (x) \"doc\")");
    assert_eq!(names, ["defmacro deploys.", "defun deploys"]);
}

#[test]
fn a_nested_backquote_keeps_its_own_commas() {
    let source = "(defmacro outer (n) `(defmacro ,n (x) `(list ,x ,',n ,,(symbolicate n '-b))))";
    let mut macros = Macros::default();
    macros.extend(learn(
        format!("{source}\n(outer foo)").as_bytes(),
        &|_, _| true,
    ));
    let inner = macros.get("foo").expect("foo learned from (outer foo)");
    let mut text = String::new();
    super::datum::print(&inner.body[0], &mut text);
    assert_eq!(text, "`(list ,x ,'foo ,foo-b)");
}

/// consfigurator's `defproplist`: anaphora's `alet` around the template, a `loop` that
/// returns from its `else` clause.
#[test]
fn a_body_ending_in_alet_binds_it() {
    let source = "(defmacro defthing (name &body properties)
  (alet (loop for remaining on properties
              for car = (car remaining)
              if (stringp car) collect car into begin
              else return (nreverse (cons `(progn ,@remaining) begin)))
    `(defun ,name () ,@it)))";
    assert_eq!(
        names_with_functions(source, "(defthing installed \"doc\" (f))"),
        ["defun installed"]
    );
}
