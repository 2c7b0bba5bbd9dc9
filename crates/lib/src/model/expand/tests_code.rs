//! Ordinary code in a project function that the evaluator reads (`eval/code.rs`,
//! `caar` ..., a variable holding a function given to `funcall`): clx's `get-put-items`,
//! reduced.

use super::datum::print;
use super::tests::val;
use super::{functions, learn, Budget, Lookup, Macros, MAX_EXPANSION_STEPS};
use std::collections::HashSet;

const SRC: &str = r#"
(defmacro wround (index) `(the array-index (logand (+ ,index 1) -2)))
(defun types (type-args)
  (do* ((items type-args (cdr items)) (type (caar items) (caar items)) (result nil))
       ((endp items) result)
    (setq result (append result (list type)))))
(defun writer (bf)
  (unless bf (setq bf #'(lambda (x) `((foo ,x)))))
  (let ((r nil)) (setq r (append r (funcall bf 1))) r))
(defun rounded (i) (when (constantp i) (setq i (wround i))) i)
(defmacro m1 () `(,(types '((card16 x) (int16 y)))))
(defmacro m2 () `(,(writer nil)))
(defmacro m3 () `(,(rounded 5) ,(rounded '(* 2 x))))
(defmacro m4 (&rest forms)
  (loop while (keywordp (caar forms)) do `(,@(cdr (pop forms))))
  `(done))
"#;

fn expansion(call: &str) -> String {
    let mut m = Macros::default();
    m.extend(learn(SRC.as_bytes(), &|_, _| true));
    let wanted: HashSet<String> = ["types", "writer", "rounded"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    m.add_functions(functions::learn_any(SRC.as_bytes(), &wanted, &|_, _| true));
    let form = val(call);
    let mac = m.get(form.head().unwrap()).unwrap().clone();
    let lookup = Lookup {
        global: &m,
        locals: &[],
    };
    let v = super::expand(&mac, &form, &lookup, &mut Budget::new(MAX_EXPANSION_STEPS));
    let mut text = String::new();
    print(&v.unwrap_or(super::datum::Val::Unknown), &mut text);
    text
}

#[test]
fn a_functions_ordinary_code_is_computed() {
    // `caar` in a `do*`.
    assert_eq!(expansion("(m1)"), "((card16 int16))");
    // A variable holding `#'(lambda ...)`, given to `funcall`.
    assert_eq!(expansion("(m2)"), "(((foo 1)))");
    // `constantp` of a number and of a call reading a variable; the project's own macro
    // `wround` called as code, its `the` read through.
    assert_eq!(expansion("(m3)"), "(6 (* 2 x))");
    // A loop whose test reads what a template's comma pops never sees it change: unknown,
    // not an iteration to the end of the budget that loses the expansion.
    assert_eq!(expansion("(m4 (:a 1) (:b 2))"), "(done)");
}
