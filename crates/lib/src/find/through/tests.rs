use super::*;
use crate::find::{check, FindRequest};
use crate::grammar::Grammar;

/// The calls through macros `find --callers name` finds in `src` (its own macros
/// learned): each as (the macro call's operator as written, the macro).
fn through(src: &str, name: &str) -> Vec<(String, String)> {
    let mut request = FindRequest::new(".");
    request.callers = Some(name.to_string());
    let mut search = check(&request, ".", &Grammar::builtin()).expect("a valid request");
    learn_in_memory(&[("a.lisp", src.as_bytes())], &mut search);
    let Target::Callers(query) = &search.target else {
        unreachable!("a callers search")
    };
    let b = src.as_bytes();
    let wanted = |t: &[u8]| query.matches_token(t) || search.through.is_writer(t);
    let (direct, sites): (Vec<Call>, Vec<Call>) =
        calls_in(b, 0, b.len(), &mut |_, _| true, &wanted)
            .into_iter()
            .partition(|c| query.matches_token(&b[c.start..c.end]));
    let mut budget = Budget::for_file(b.len());
    calls_through(b, 0, b.len(), &search, query, &direct, sites, &mut budget)
        .into_iter()
        .map(|(c, m)| (src[c.start..c.end].to_string(), m))
        .collect()
}

const YASON: &str = "(defmacro with-aggregate/object ((stream open close) &body body)
  (alexandria:with-gensyms (printed)
    `(progn (write-delimiter ,open ,stream)
            (let (,printed) ,@body)
            (write-delimiter ,close ,stream))))
(defmethod encode ((object hash-table) &optional (stream *standard-output*))
  (with-aggregate/object (stream #\\{ #\\})
    (maphash (lambda (k v) (encode k stream) (encode v stream)) object)))
";

#[test]
fn a_call_of_a_macro_whose_template_calls_the_symbol_calls_it_through_the_macro() {
    assert_eq!(
        through(YASON, "write-delimiter"),
        [(
            "with-aggregate/object".into(),
            "with-aggregate/object".into()
        )]
    );
    // What only the call's arguments hold is no call through the macro.
    assert!(through(YASON, "maphash").is_empty());
    // What the macro computes while expanding is not in its expansion.
    assert!(through(YASON, "with-gensyms").is_empty());
}

#[test]
fn a_call_the_macro_call_spells_is_the_ordinary_case() {
    let src = "(defmacro twice (&body body) `(progn (foo) ,@body))
(defun a () (twice (foo)))
(defun b () (twice (bar)))";
    // `a` calls foo itself: no second report through the macro; `b` only through it.
    let found = through(src, "foo");
    assert_eq!(found, [("twice".into(), "twice".into())]);
    let only_a = "(defmacro twice (&body body) `(progn (foo) ,@body))
(defun a () (twice (foo)))";
    assert!(through(only_a, "foo").is_empty());
}

#[test]
fn a_macro_calling_a_macro_that_writes_the_call_writes_it_too() {
    let src = "(defmacro inner (x) `(foo ,x))
(defmacro outer (x) `(let ((y ,x)) (inner y)))
(defun a () (outer 1))";
    // `(inner y)` in outer's template is the code outer writes, not outer's own call.
    assert_eq!(through(src, "foo"), [("outer".into(), "outer".into())]);
}

#[test]
fn the_instantiated_expansion_decides_not_the_template_alone() {
    // The template writes `(foo 1)` where the call's operator puts it: `quote` makes it
    // data, `list` code.
    let src = "(defmacro m (op) `(,op (foo 1)))
(defun a () (m quote))";
    assert!(through(src, "foo").is_empty());
    let src = "(defmacro m (op) `(,op (foo 1)))
(defun b () (m list))";
    assert_eq!(through(src, "foo"), [("m".into(), "m".into())]);
    // In the template's data only: never a call.
    let src = "(defmacro m (f) `(progn '(foo) (,f 1)))
(defun a () (m bar))";
    assert!(through(src, "foo").is_empty());
    // A template that writes `(funcall 'foo)` and `#'foo` calls it.
    let src = "(defmacro m (x) `(mapcar #'foo ,x))
(defun a () (m y))";
    assert_eq!(through(src, "foo"), [("m".into(), "m".into())]);
}

#[test]
fn a_macro_that_cannot_be_instantiated_is_taken_at_its_templates_word() {
    // The body ends in `if`: never instantiated; each of its templates calls foo.
    let src = "(defmacro m (x) (if (consp x) `(foo ,@x) `(foo ,x)))
(defun a () (m 1))";
    assert_eq!(through(src, "foo"), [("m".into(), "m".into())]);
}

#[test]
fn a_local_function_of_the_macros_name_is_not_the_macro() {
    let src = "(defmacro m () `(foo))
(defun a () (flet ((m () 1)) (m)))";
    assert!(through(src, "foo").is_empty());
}

#[test]
fn hostile_macros_stay_bounded() {
    // A macro writing a call of itself: followed MAX_MACRO_DEPTH deep only.
    let src = "(defmacro m (x) `(m (m ,x)))
(defmacro w (x) `(progn (foo) (m ,x)))
(defun a () (m (m (m 1))) (w 2))";
    assert_eq!(through(src, "foo"), [("w".into(), "w".into())]);
    // Deeply nested calls of a writer: each read once within the file's budget.
    let deep = format!(
        "(defmacro w (&rest x) `(foo ,@x))\n(defun a () {}1{})",
        "(w ".repeat(20_000),
        ")".repeat(20_000)
    );
    let found = through(&deep, "foo");
    assert!(!found.is_empty() && found.len() <= 20_000);
}

#[test]
fn what_the_instantiation_cannot_compute_may_be_the_call() {
    // cl-postgres's define-message: the templates are pushed onto a list the final one
    // splices, which only evaluation would know.
    let src = "(defmacro m (x) (let ((w ())) (push `(foo ,x) w) `(defun g () ,@w)))
(m 1)";
    assert_eq!(through(src, "foo"), [("m".into(), "m".into())]);
}

#[test]
fn a_macro_call_a_template_writes_is_not_the_forms_own() {
    // cl-ppcre's do-matches writes a call of do-scans, which calls create-scanner: the
    // code do-matches writes calls it, do-matches itself does not.
    let src = "(defmacro do-scans (r &body body) `(let ((s (create-scanner ,r))) ,@body))
(defmacro do-matches (r &body body) `(do-scans ,r ,@body))
(defun count-matches (r) (do-matches r 1))";
    assert_eq!(
        through(src, "create-scanner"),
        [("do-matches".into(), "do-matches".into())]
    );
}

#[test]
fn macros_inside_forms_and_at_line_starts_are_both_learned() {
    let nested = "(eval-when (:compile-toplevel)\n  (defmacro m () `(foo)))\n(defun a () (m))";
    assert_eq!(through(nested, "foo"), [("m".into(), "m".into())]);
    // At line starts, each read up to the next: an unclosed one does not hide the next.
    let unclosed = "(defmacro broken (\n(defmacro m () `(foo))\n(defun a () (m))";
    assert_eq!(through(unclosed, "foo"), [("m".into(), "m".into())]);
}

/// clx's accessors: `define-accessor` writes the `-get` macros, their names built by a
/// project function calling another.
const ACCESSORS: &str = "(defun xintern (&rest parts)
  (intern (apply #'concatenate 'string (mapcar #'string parts))))
(defun getify (name) (xintern name '-get))
(defmacro define-accessor (name (width) &body get-put-macros)
  (let ((get-macro (first get-put-macros)))
    `(progn (setf (get ',name 'byte-width) ,width)
            (defmacro ,(getify name) ,(car get-macro) ,@(cdr get-macro)))))
(defmacro read-card16 (index) `(aref-card16 buffer ,index))
(define-accessor card16 (16) ((index) `(read-card16 ,index)))
(defun reply-length (reply) (card16-get 4))
(defun other (reply) (card8-get 4))
";

#[test]
fn a_macro_a_project_macro_defines_writes_calls_too() {
    // `card16-get` is made by `define-accessor`: its template writes `read-card16`, whose
    // template writes `aref-card16`.
    assert_eq!(
        through(ACCESSORS, "read-card16"),
        [("card16-get".into(), "card16-get".into())]
    );
    assert_eq!(
        through(ACCESSORS, "aref-card16"),
        [("card16-get".into(), "card16-get".into())]
    );
    // A name no call of the definer makes is no macro.
    assert!(through(ACCESSORS, "card8-get").is_empty());
}

/// consfigurator's `defprop`: made by a macro whose nested template writes the call.
const DEFINING_MACRO: &str = "(defmacro define-property-defining-macro (mname (typev) &body mbody)
  `(defmacro ,mname (name ,typev &body body)
     `(progn (defun ,name () (consfigure ',name)))))
(define-property-defining-macro defprop (type))
(defprop installed :posix (:apply (install)))
";

#[test]
fn a_macro_made_by_a_macro_writing_a_nested_template_writes_its_calls() {
    // The property's `defprop` call, through the made macro. (The definer's own call is
    // listed too: the nested template of its expansion is read as code.)
    assert_eq!(
        through(DEFINING_MACRO, "consfigure"),
        [
            (
                "define-property-defining-macro".into(),
                "define-property-defining-macro".into()
            ),
            ("defprop".into(), "defprop".into())
        ]
    );
}

/// lparallel's `defslots`: the `defmacro` is written two macros down, inside a nested
/// template whose `,',conc-name` is the outer one's.
const SLOTS: &str = "(defmacro define-with-slots-macro (name conc-name)
  `(defmacro ,name (instance &body body)
     `(define-slots-macrolet ,',conc-name ,instance ,@body)))
(defmacro defslots (name)
  `(define-with-slots-macro ,(symbolicate '#:with- name '#:-slots) ,(symbolicate name '#:-)))
(defslots queue)
(defun peek (queue) (with-queue-slots queue (car impl)))
";

#[test]
fn a_macro_writing_a_call_of_a_definer_defines_macros_too() {
    // (`defslots` too: the nested template of its expansion is read as code.)
    assert_eq!(
        through(SLOTS, "define-slots-macrolet"),
        [
            ("defslots".into(), "defslots".into()),
            ("with-queue-slots".into(), "with-queue-slots".into())
        ]
    );
    // A call of a definer is instantiated only when its text or its definer's holds the
    // searched name or a macro writing it: `queue-impl` is only built.
    assert!(through(SLOTS, "queue-impl").is_empty());
}

/// clx's request macros, reduced: `check-put` writes `(,(putify type) ...)` after a
/// branch on `(macroexpand `(type-check ...) env)` over a global constant; the code
/// `with-buffer-request-internal` splices is what the project function `get-put-items`
/// returns, computed with the property `define-accessor` stores and the macros
/// `wround`/`lround` called as code.
const CLX: &str = r#"
(defconstant +type-check?+ nil)
(defmacro index+ (&rest numbers) `(+ ,@numbers))
(defmacro type-check (value type)
  value type
  (when +type-check?+
    `(unless (type? ,value ,type)
       (x-type-error ,value ,type))))
(defmacro lround (index)
  `(the array-index (logand (index+ ,index 3) -4)))
(defmacro wround (index)
  `(the array-index (logand (index+ ,index 1) -2)))
(defun xintern (&rest parts)
  (intern (apply #'concatenate 'string (mapcar #'string parts)) *xlib-package*))
(defun index-increment (type)
  (let* ((name (if (consp type) (car type) type))
	 (increment (get name 'byte-width :not-found)))
    (when (eq increment :not-found)
      (when (not (eq (symbol-package name) *xlib-package*))
	(setq name (xintern name))
	(setq increment (get name 'byte-width :not-found)))
      (when (eq increment :not-found)
	(error "~s isn't a known field accessor" name)))
    increment))
(defun putify (name &optional predicate-p)
  (xintern name '-put (if predicate-p '-predicating "")))
(defmacro define-accessor (name (width) &body get-put-macros)
  (let ((put-macro (second get-put-macros)))
    `(progn
       (setf (get ',name 'byte-width) ,(and width (floor width 8)))
       (defmacro ,(putify name) ,(car put-macro)
	 ,@(cdr put-macro)))))
(define-accessor int16 (16)
  ((index) `(read-int16 ,index))
  ((index thing) `(write-int16 ,index ,thing)))
(define-accessor card16 (16)
  ((index) `(read-card16 ,index))
  ((index thing) `(write-card16 ,index ,thing)))
(defmacro check-put (index value type &rest args &environment env)
  (let* ((var (if (or (symbolp value) (constantp value)) value '.value.))
	 (body
	   (if (or (null (macroexpand `(type-check ,var ',type) env))
		   (member type '(or progn pad8 pad16))
		   (constantp value))
	       `(,(putify type) ,index ,var ,@args)
	     (if (get type 'predicating-put)
		 `(or (,(putify type t) ,index ,var ,@args)
		      (x-type-error ,var ',(if args `(,type ,@args) type)))
	       `(if (type? ,var ',type)
		    (,(putify type) ,index ,var ,@args)
		  (x-type-error ,var ',(if args `(,type ,@args) type)))))))
    (if (eq var value)
	body
      `(let ((,var ,value))
	 ,body))))
(defun get-put-items (index type-args putp &optional body-function)
  (unless body-function
    (setq body-function
	  #'(lambda (type index item args)
	      `((check-put ,index ,item ,type ,@args)))))
  (do* ((items type-args (cdr items))
	(type (caar items) (caar items))
	(args nil nil)
	(result nil)
	(sizes nil))
       ((endp items) (values result index sizes))
    (when (consp type)
      (setq args (cdr type)
	    type (car type)))
    (cond ((member type '(return buffer)))
	  (t (do* ((item (cdar items) (cdr item))
		   (increment (index-increment type)))
		  ((endp item))
	       (when (constantp index)
		 (case increment
		   (2 (setq index (wround index)))
		   (4 (setq index (lround index)))))
	       (setq result
		     (append result (funcall body-function type index (car item) args)))
	       (when (constantp index)
		 (if (null increment)
		     (setq index nil)
		   (progn
		     (incf index increment)
		     (when (and increment (zerop increment)) (setq increment 1))
		     (pushnew (* increment 8) sizes)))))))))
(defmacro with-buffer-request-internal
	  ((buffer opcode &key length sizes &allow-other-keys)
	   &body type-args)
  (multiple-value-bind (code index item-sizes)
      (get-put-items 4 type-args t)
    (let ((length (if length `(index+ ,length +requestsize+) '+requestsize+))
	  (sizes (remove-duplicates (append '(8 16) item-sizes sizes))))
      `(with-buffer-output (,buffer :length ,length :sizes ,sizes)
	 (write-card8 0 ,opcode)
	 ,@code
	 ,@(when index
	     (setq index (lround index))
	     `((write-card16 2 ,(ceiling index 4))))
	 (buffer-new-request-number ,buffer)))))
(defun create-window (w x) (with-buffer-request-internal (w 1) (card16 x)))
(defun move-window (w y) (with-buffer-request-internal (w 2) (int16 y)))
"#;

#[test]
fn a_call_under_an_operator_the_macro_computes_is_found_and_only_that_one() {
    let internal = || {
        (
            "with-buffer-request-internal".to_string(),
            "with-buffer-request-internal".to_string(),
        )
    };
    // `card16-put`: a name no text spells, computed by `putify`.
    assert_eq!(through(CLX, "card16-put"), [internal()]);
    // What `card16-put`'s template writes, under a computed operator: only the call
    // whose type is `int16` writes `write-int16`.
    assert_eq!(through(CLX, "write-int16"), [internal()]);
    assert_eq!(through(CLX, "write-card16").len(), 2);
    // `check-put`, written by the code the function returns: both.
    assert_eq!(through(CLX, "check-put"), [internal(), internal()]);
}

#[test]
fn the_searched_macro_is_not_expanded_away_in_the_code_around_it() {
    // clx's `with-buffer-output` is a macro writing a `let`, whose body is expanded in
    // turn; `write-int16` is a macro too. Expanding every macro of that body would
    // expand the searched `check-put` and `write-int16` themselves, and their calls
    // would be gone from the code looked at.
    let clx = format!(
        "{CLX}(defmacro with-buffer-output ((buffer &key length sizes) &body body)
  `(let ((%buffer ,buffer)) (declare (ignorable %buffer)) ,@body))
(defmacro write-int16 (index thing) `(aset-int16 ,thing buffer-bbuf ,index))
(defmacro write-card16 (index thing) `(aset-card16 ,thing buffer-bbuf ,index))
"
    );
    let internal = || {
        (
            "with-buffer-request-internal".to_string(),
            "with-buffer-request-internal".to_string(),
        )
    };
    assert_eq!(through(&clx, "check-put"), [internal(), internal()]);
    assert_eq!(through(&clx, "write-int16"), [internal()]);
    // What the macros expand to is still found through them.
    assert_eq!(through(&clx, "aset-int16"), [internal()]);
}

#[test]
fn a_made_macro_computing_an_operator_is_made_for_the_names_it_may_write() {
    // clx's `(define-accessor or ...)` makes `or-put`, whose `do` loop writes
    // `(,(putify type) ...)` for each type of `(or null card16)`: its call holds neither
    // `null-put` nor a name of a macro writing it, but it writes a call of `null-put`.
    let clx = format!(
        "{CLX}(define-accessor null (32)
  ((index) `(read-card32 ,index))
  ((index value) (declare (ignore value)) `(write-card32 ,index 0)))
(define-accessor or (32)
  ((index &rest type-list) (declare (ignore type-list)) `(read-card32 ,index))
  ((index value &rest type-list)
   (do ((types type-list (cdr types))
        (result))
       ((endp types) `(cond ,@(nreverse result)))
     (push `((type? ,value ',(car types)) (,(putify (car types)) ,index ,value)) result))))
(defun set-owner (w o) (with-buffer-request-internal (w 3) ((or null card16) o)))
"
    );
    let internal = (
        "with-buffer-request-internal".to_string(),
        "with-buffer-request-internal".to_string(),
    );
    let once = std::slice::from_ref(&internal);
    assert_eq!(through(&clx, "null-put"), once);
    assert_eq!(through(&clx, "write-card32"), once);
}

#[test]
fn a_function_writing_code_under_an_operator_it_computes_writes_those_calls() {
    // clx's `make-setter-forms`, a function, writes `(,(setter type) ,name .rbuf.)` for
    // the macro `define-rendering-command` that splices its code into a `defun`.
    let src = "(defun setter (type) (ecase type (int8 'aset-int8) (card32 'aset-card32)))
(defun make-setter-forms (specs)
  (loop for (name type) in specs
        collecting `(,(setter type) ,name .rbuf.)))
(defmacro define-command (name &rest args)
  (let ((specs (mapcar #'(lambda (a) (destructuring-bind (n ty) a (list n ty))) args)))
    `(defun ,name ,(mapcar #'first specs) ,@(make-setter-forms specs))))
(define-command accum (op card32))
(define-command begin (mode int8))
";
    let command = ("define-command".to_string(), "define-command".to_string());
    let once = std::slice::from_ref(&command);
    assert_eq!(through(src, "aset-card32"), once);
    assert_eq!(through(src, "aset-int8"), once);
    assert!(through(src, "aset-card16").is_empty());
}
