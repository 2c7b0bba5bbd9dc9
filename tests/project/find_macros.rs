//! `find` and the definitions a project's own definer macros make
//! (docs/find.md#definitions-made-by-the-projects-own-macros): learned from every file
//! of the scope, instantiated at each call, through the library and the real binary; and
//! the search stays linear on adversarial macros.

use crate::find_linearity::{assert_find_linear, Family};
use lisp_read_file::cancel::CancelToken;
use lisp_read_file::find::{find, Definition, FindRequest, FindResult};
use lisp_read_file::grammar::Grammar;
use lisp_read_file::guard::Guard;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");

const MACROS: &str = "(in-package :shapes)

(defmacro defthing (name &key (prefix \"MAKE-\"))
  \"Defines a maker and a predicate for NAME.\"
  (let ((maker (intern (concatenate 'string prefix (symbol-name name)))))
    `(progn
       (defun ,maker () (list ',name))
       (defun ,(symbolicate name '-p) (x) (eq x ',name)))))

(defmacro defrecord (name &rest slots)
  `(defstruct (,name (:constructor ,(format-symbol t \"%MAKE-~A\" name))) ,@slots))

(defmacro defweird (name)
  (if (weird-p name) `(defun ,name ()) nil))

(defmacro defplain (name)
  `(defstruct ,name a))
";

const USES: &str = "(in-package :shapes)

(defthing point)
(defthing circle :prefix \"NEW-\")

(defrecord cell
  value)

(macrolet ((frob (type)
             `(defun ,(symbolicate 'copy- type) (x) (copy-seq x))))
  (frob vector)
  (frob text))

(defweird zap)

(defplain box)
";

fn project() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("lrf-find-macros-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("macros.lisp"), MACROS).unwrap();
    std::fs::write(dir.join("uses.lisp"), USES).unwrap();
    dir
}

fn search(dir: &Path, edit: impl FnOnce(&mut FindRequest)) -> FindResult {
    let guard = Guard::confined(&[dir.to_path_buf()], 1 << 20).unwrap();
    let mut request = FindRequest::new(".");
    edit(&mut request);
    find(&guard, &Grammar::builtin(), &request, &CancelToken::new()).unwrap()
}

/// `kind name file:line via MACRO (form line)`.
fn shown(defs: &[Definition]) -> Vec<String> {
    defs.iter()
        .map(|d| {
            format!(
                "{} {} {}:{} via {} ({})",
                d.kind,
                d.name,
                d.file,
                d.line,
                d.via.as_deref().unwrap_or("-"),
                d.form.as_ref().map_or(0, |f| f.line)
            )
        })
        .collect()
}

#[test]
fn names_built_by_a_macro_are_found_at_its_call() {
    let dir = project();
    let defs = |name: &str| {
        shown(
            &search(&dir, |r| r.name = Some(name.into()))
                .definitions
                .unwrap(),
        )
    };
    // Neither name is spelled anywhere: `intern` of `concatenate`, `symbolicate`.
    assert_eq!(
        defs("make-point"),
        ["defun make-point uses.lisp:3 via defthing (3)"]
    );
    assert_eq!(
        defs("point-p"),
        ["defun point-p uses.lisp:3 via defthing (3)"]
    );
    // A keyword argument's value replaces its default.
    assert_eq!(
        defs("new-circle"),
        ["defun new-circle uses.lisp:4 via defthing (4)"]
    );
    assert_eq!(defs("make-circle"), Vec::<String>::new());
    // A structure the expansion defines makes its derived names.
    assert_eq!(
        defs("%make-cell"),
        ["constructor %make-cell uses.lisp:6 via defrecord (6)"]
    );
    assert_eq!(
        defs("cell-value"),
        ["accessor cell-value uses.lisp:6 via defrecord (6)"]
    );
    // A `macrolet` macro, for the forms of its body.
    assert_eq!(
        defs("copy-text"),
        ["defun copy-text uses.lisp:12 via frob (12)"]
    );
    // No builder, but a structure: its derived names are not in the call's text.
    assert_eq!(
        defs("make-box"),
        ["constructor make-box uses.lisp:16 via defplain (16)"]
    );
    // A choice on a test that is not computed: the generic `def...` rule stays.
    assert_eq!(defs("zap"), ["defweird zap uses.lisp:14 via - (0)"]);
}

#[test]
fn a_pattern_lists_what_the_call_makes_instead_of_its_first_argument() {
    let dir = project();
    let result = search(&dir, |r| r.name_pattern = Some("point".into()));
    assert_eq!(
        shown(&result.definitions.unwrap()),
        [
            "defun make-point uses.lisp:3 via defthing (3)",
            "defun point-p uses.lisp:3 via defthing (3)"
        ]
    );
    // `kinds` names the definer the expansion writes, or the macro.
    let by_kind = |k: &str| {
        search(&dir, |r| {
            r.name_pattern = Some("cell".into());
            r.kinds = Some(vec![k.into()]);
        })
        .definitions
        .unwrap()
        .len()
    };
    assert_eq!(by_kind("defrecord"), 6);
    assert_eq!(by_kind("constructor"), 1);
}

#[test]
fn the_binary_says_which_macro_made_a_definition() {
    let dir = project();
    // One call's definitions: the macro and its call said once, by the first.
    let out = Command::new(BIN)
        .args([
            "find",
            "--name-pattern",
            "point",
            "--kinds",
            "defun",
            "--root",
        ])
        .arg(&dir)
        .arg(&dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "3: defun make-point, via defthing at 3: (defthing point)\n 3: defun point-p\n"
        ),
        "{text}"
    );
    assert_eq!(text.matches("via defthing").count(), 1, "{text}");
    let out = Command::new(BIN)
        .args(["find", "--name", "point-p", "--root"])
        .arg(&dir)
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("uses.lisp:3:defun point-p, via defthing at 3: (defthing point)"),
        "{text}"
    );
    let out = Command::new(BIN)
        .args(["find", "--name", "point-p", "--json", "--root"])
        .arg(&dir)
        .arg(&dir)
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let d = &json["definitions"][0];
    assert_eq!(d["via"], "defthing");
    assert_eq!(d["kind"], "defun");
    assert_eq!(d["package"], "shapes");
    assert_eq!(d["form"]["kind"], "defthing");
}

/// A file whose macro calls spend its budget of expansions (linear in its size) has
/// definitions that are not made; the answer says so and names the file, where it had
/// listed the first few hundred as if they were all (the outside review's case). A file
/// within its budget has no such note.
#[test]
fn a_file_whose_expansions_stop_at_their_budget_is_named_in_a_note() {
    let dir = std::env::temp_dir().join(format!("lrf-find-cut-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let many = |calls: usize| {
        let mut text = String::from(
            "(defmacro def-many (name)\n  `(progn ,@(loop for i below 300 collect `(defvar ,(symbolicate name \"-\" (princ-to-string i)) nil))))\n",
        );
        for i in 0..calls {
            text.push_str(&format!("(def-many a{i})\n"));
        }
        text
    };
    std::fs::write(dir.join("many.lisp"), many(3_000)).unwrap();
    std::fs::write(dir.join("few.lisp"), many(10)).unwrap();
    let run = |file: &str| {
        let out = Command::new(BIN)
            .args([
                "find",
                "--name-pattern=a.*-299$",
                "--detail",
                "names",
                "--json",
            ])
            .arg(dir.join(file))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let note = "stopped at their budget";
    let few = run("few.lisp");
    assert_eq!(few["total"], 10);
    assert!(!few["content"].as_str().unwrap().contains(note), "{few}");
    let cut = run("many.lisp");
    let total = cut["total"].as_u64().unwrap();
    assert!(total < 3_000, "{total}");
    let text = cut["content"].as_str().unwrap();
    assert!(text.contains(note) && text.contains("many.lisp"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `n` calls of a macro whose expansion doubles at each of 12 levels of macros calling
/// macros: each call is cut by its budget.
fn multiplying(size: usize) -> Vec<u8> {
    let mut out = String::from("(defmacro m0 (x) `(defvar ,(symbolicate x '-v)))\n");
    for k in 1..=12 {
        out.push_str(&format!(
            "(defmacro m{k} (x) `(progn (m{} ,x) (m{} ,x)))\n",
            k - 1,
            k - 1
        ));
    }
    let mut k = 0;
    while out.len() < size {
        out.push_str(&format!("(m12 n{k})\n"));
        k += 1;
    }
    out.into_bytes()
}

/// One macro with a lambda list as long as the file, called once with as many arguments,
/// its template naming each of them.
fn huge_lambda_list(size: usize) -> Vec<u8> {
    let n = size / 24;
    let params: Vec<String> = (0..n).map(|k| format!("a{k}")).collect();
    let keys: Vec<String> = (0..n).map(|k| format!("(k{k} 'd)")).collect();
    let uses: Vec<String> = (0..n)
        .map(|k| format!("(defvar ,(symbolicate a{k} k{k}))"))
        .collect();
    let args: Vec<String> = (0..n).map(|k| format!("x{k}")).collect();
    format!(
        "(defmacro big ({} &key {}) `(progn {}))\n(big {})\n",
        params.join(" "),
        keys.join(" "),
        uses.join(" "),
        args.join(" ")
    )
    .into_bytes()
}

/// A call whose argument nests as deep as the file is long, of a macro that splices it.
fn deep_argument(size: usize) -> Vec<u8> {
    let depth = size / 2;
    format!(
        "(defmacro defdeep (name &body body) `(progn (defun ,(symbolicate name '-x) () ,@body)))\n(defdeep d {}x{})\n",
        "(".repeat(depth),
        ")".repeat(depth)
    )
    .into_bytes()
}

/// Many `macrolet`s, each with many bindings and calls.
fn many_macrolets(size: usize) -> Vec<u8> {
    let mut out = String::new();
    let mut k = 0;
    while out.len() < size {
        let bindings: Vec<String> = (0..40)
            .map(|j| format!("(f{j} (n) `(defun ,(symbolicate n '-{j}) ()))"))
            .collect();
        let calls: Vec<String> = (0..40).map(|j| format!("(f{j} g{k})")).collect();
        out.push_str(&format!(
            "(macrolet ({}) {})\n",
            bindings.join(" "),
            calls.join(" ")
        ));
        k += 1;
    }
    out.into_bytes()
}

/// A helper function in one file, the macros that call it in another, their calls in a
/// third: the names are computed by the project's functions.
const HELPERS: &str = "(in-package :shapes)
(eval-when (:compile-toplevel :load-toplevel :execute)
  (defun reader-name (bytes signed)
    (intern (with-standard-io-syntax
              (format nil \"~a~a~a~a\" '#:read- (if signed \"\" '#:u) '#:int bytes))))
  (defun define-one-class (class &rest parents)
    `(progn (define-condition ,class ,parents ())
            (export ',class))))
";

const HELPED_MACROS: &str = "(in-package :shapes)
(defmacro integer-reader (bytes)
  (labels ((generate (signed)
             `(defun ,(reader-name bytes signed) (socket) (read-byte socket))))
    `(progn ,(generate nil) ,(generate t))))
(defmacro define-classes (class-list parents)
  `(progn ,@(mapcar #'(lambda (x) (apply #'define-one-class x parents)) class-list)))
";

const HELPED_USES: &str = "(in-package :shapes)
(integer-reader 2)
(define-classes (timeout-error shutdown-error)
  (socket-error))
";

#[test]
fn names_computed_by_the_projects_functions_are_found() {
    let dir = project();
    std::fs::write(dir.join("helpers.lisp"), HELPERS).unwrap();
    std::fs::write(dir.join("helped-macros.lisp"), HELPED_MACROS).unwrap();
    std::fs::write(dir.join("helped-uses.lisp"), HELPED_USES).unwrap();
    let defs = |name: &str| {
        shown(
            &search(&dir, |r| r.name = Some(name.into()))
                .definitions
                .unwrap(),
        )
    };
    // Spelled nowhere: `reader-name` computes it.
    assert_eq!(
        defs("read-uint2"),
        ["defun read-uint2 helped-uses.lisp:2 via integer-reader (2)"]
    );
    assert_eq!(
        defs("read-int2"),
        ["defun read-int2 helped-uses.lisp:2 via integer-reader (2)"]
    );
    // `mapcar` of a `lambda` applying `define-one-class`: each class, not the macro's
    // first argument.
    assert_eq!(
        defs("shutdown-error"),
        ["define-condition shutdown-error helped-uses.lisp:3 via define-classes (3)"]
    );
    // Through the binary.
    let out = Command::new(BIN)
        .args(["find", "--name", "read-uint2", "--root"])
        .arg(&dir)
        .arg(&dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "helped-uses.lisp:2:defun read-uint2, via integer-reader at 2: (integer-reader 2)\n"
        ),
        "{text}"
    );
}

/// Macros naming their definitions with a project function that calls itself twice
/// (its work doubles at each call until the depth bound or the budget stops it).
fn recursive_helpers(size: usize) -> Vec<u8> {
    let mut out = String::from(
        "(defun twice (x) (if x (symbolicate (twice x) (twice x)) x))
(defun names-of (xs) (mapcar #'twice xs))
(defmacro def-twice (name &rest more)
  `(progn (defun ,(twice name) ()) ,@(mapcar (lambda (n) `(defvar ,n)) (names-of more))))\n",
    );
    let mut k = 0;
    while out.len() < size {
        out.push_str(&format!("(def-twice n{k} a b c d e f g h)\n"));
        k += 1;
    }
    out.into_bytes()
}

/// Top-level `#.` forms that would collect a billion definitions: each is cut by the
/// budget, never by memory.
fn endless_read_time_loops(size: usize) -> Vec<u8> {
    let form = "#.(loop for i from 0 below 1000000000
        collect `(defvar ,(symbolicate 'n i '-v)) into forms
        finally (return `(progn ,@forms)))\n";
    form.repeat(size / form.len() + 1).into_bytes()
}

/// A macro whose body's `do` never ends, and a `loop` that doubles a list, called over
/// and over.
fn endless_looping_macros(size: usize) -> Vec<u8> {
    let mut out = String::from(
        "(defmacro m (x) (do ((l (list x) (append l l))) (nil) (push x l)) `(defvar ,x))
(defmacro n (x) (loop for i from 0 collect `(defvar ,(symbolicate x i)) into f
                      finally (return `(progn ,@f))))\n",
    );
    let mut k = 0;
    while out.len() < size {
        out.push_str(&format!("(m a{k}) (n b{k})\n"));
        k += 1;
    }
    out.into_bytes()
}

/// Twenty definer macros holding `def` (the widened prefilter then finds them from the
/// occurrences of `def`), each reading a variable of the file that a `setf` assigns,
/// called in forms thick with `def` and with near misses of their names.
fn def_dense_calls(size: usize) -> Vec<u8> {
    let mut out = String::from("(defvar *v* 1)\n(setf *v* 2)\n");
    for k in 0..20 {
        out.push_str(&format!(
            "(defmacro def-thing-{k} (n) (if *v* `(defvar ,(symbolicate n '-v)) nil))\n"
        ));
    }
    let mut k = 0;
    while out.len() < size {
        out.push_str(&format!(
            "(def-thing-{} n{k}) (foo defdefdef def-thing def-thing-{}x undef-thing-1)\n",
            k % 20,
            k % 20
        ));
        k += 1;
    }
    out.into_bytes()
}

/// The same macros, and one form of the whole file holding `def` over and over.
fn one_def_dense_form(size: usize) -> Vec<u8> {
    let mut out = String::new();
    for k in 0..20 {
        out.push_str(&format!(
            "(defmacro def-thing-{k} (n) `(defvar ,(symbolicate n '-v)))\n"
        ));
    }
    out.push_str("(progn");
    while out.len() < size {
        out.push_str(" def-thing-1 defdef");
    }
    out.push_str(")\n");
    out.into_bytes()
}

/// A definer call that the gate lexes for comments (it holds a `;`), thick with `#`
/// inside tokens and with a single `|` at its end: the next `|` is searched for once,
/// not again from every `#`.
fn one_commented_call_of_hashes(size: usize) -> Vec<u8> {
    let mut out =
        String::from("(defmacro def-thing-1 (n &rest r) `(defvar ,(symbolicate n '-v)))\n");
    out.push_str("(def-thing-1 n1 ; a comment\n");
    while out.len() < size {
        out.push_str(" a#b c#d");
    }
    out.push_str(" |x|)\n");
    out.into_bytes()
}

#[test]
fn find_is_linear_on_adversarial_macros() {
    let families: Vec<(&'static str, Family)> = vec![
        ("multiplying templates", multiplying),
        ("huge lambda list", huge_lambda_list),
        ("deep argument", deep_argument),
        ("many macrolets", many_macrolets),
        ("recursive project functions", recursive_helpers),
        ("endless read-time loops", endless_read_time_loops),
        ("endless looping macros", endless_looping_macros),
        ("def-dense calls", def_dense_calls),
        ("one def-dense form", one_def_dense_form),
        ("one commented call of hashes", one_commented_call_of_hashes),
    ];
    assert_find_linear(
        "find-macros",
        families,
        vec![
            ("name", |r| r.name = Some("n1-v".into())),
            ("name_pattern", |r| r.name_pattern = Some("-v$".into())),
        ],
    );
}

/// A file of `size` bytes: a macro that binds its argument to 8 variables and calls its
/// local function 3,000 times, and one call of it whose argument is a string of `string`
/// bytes (the rest of the file is a comment). The name it makes is short (a made name of
/// more than 1,024 bytes is not made).
fn local_calls_with(string: usize, size: usize) -> Vec<u8> {
    let bindings: Vec<String> = (0..8).map(|k| format!("(v{k} n)")).collect();
    let calls = vec![",(f)"; 3_000].join(" ");
    let mut out = format!(
        "(defmacro a (n) (let ({}) (flet ((f () 1)) `(progn (defun ,(symbolicate 'a '-x) ()) {calls}))))\n(a \"{}\")\n",
        bindings.join(" "),
        "s".repeat(string)
    );
    out.push(';');
    out.push_str(&"c".repeat(size.saturating_sub(out.len() + 1)));
    out.push('\n');
    out.into_bytes()
}

#[test]
fn a_local_functions_calls_cost_no_copy_of_the_macros_arguments() {
    // Each call of `f` copied the macro's variables: 3,000 copies of 9 variables holding
    // an 80 KB string (2.2 GB) against 3,000 of a byte, in files of the same size.
    let dir = std::env::temp_dir().join(format!("lrf-local-calls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let guard = Guard::confined(std::slice::from_ref(&dir), 1 << 20).unwrap();
    let size = 200_000;
    let cost_of = |name: &str, string: usize| {
        std::fs::write(dir.join(name), local_calls_with(string, size)).unwrap();
        let mut request = FindRequest::new(name);
        request.name_pattern = Some("-x$".into());
        let work = || {
            let result = find(&guard, &Grammar::builtin(), &request, &CancelToken::new());
            let found = result.unwrap().definitions.unwrap().len();
            assert_eq!(found, 1, "{name}: the call is expanded");
        };
        crate::common::cpu::cost(&work)
    };
    let short = cost_of("short.lisp", 1);
    let long = cost_of("long.lisp", 80_000);
    let _ = std::fs::remove_dir_all(&dir);
    let ratio = long as f64 / short as f64;
    assert!(ratio < 4.0, "{short} ns -> {long} ns: ratio {ratio:.1}");
}

const EVALUATED_HELPERS: &str = "(in-package :bytes)
(defun ref-name (bits signedp big-endian-p)
  (intern (format nil \"~A~D~A/~A\" (symbol-name (if signedp :sb :ub)) bits
                  (symbol-name :ref) (symbol-name (if big-endian-p :be :le)))))
";

/// A top-level `#.(loop ...)`, a `macrolet` whose binding runs a `loop`, and a macro
/// that assigns its variables under `cond` and `when` (nibbles', metabang-bind's).
const EVALUATED_USES: &str = "(in-package :bytes)
#.(loop for i from 0 below 4
        for bits = (ecase (ldb (byte 1 1) i) (0 16) (1 32))
        for big-endian-p = (logbitp 0 i)
        collect `(defun ,(ref-name bits nil big-endian-p) (v) v) into forms
        finally (return `(progn ,@forms)))

(macrolet ((define-readers (bits)
             (loop for i from 0 below 2
                   collect `(defun ,(ref-name bits t (logbitp 0 i)) (v) v) into forms
                   finally (return `(progn ,@forms)))))
  (define-readers 64))

(defmacro defbinding ((name/s) &body body)
  (let* ((several (consp name/s))
         (main nil)
         (keywordp (or several (eq (symbol-package name/s)
                                   (load-time-value (find-package :keyword))))))
    (cond (several (setf main (gensym \"GENERATOR\")))
          (t (setf main 'generate-bindings)))
    (when keywordp
      (setf name/s (if several (mapcar #'make-keyword name/s) (make-keyword name/s))))
    `(progn
       ,@(loop for name in (if several name/s (list name/s))
               when (keywordp name) collect
               `(defmethod accepts-p ((form (eql ,name))) t))
       (,(if several 'defun 'defmethod) ,main
        ,@(unless several (list (if keywordp `((kind (eql ,name/s))) `((kind ,name/s)))))
        ,@body))))

(defbinding (:values) 1)
(defbinding (symbol) 2)
";

#[test]
fn names_computed_by_the_evaluated_forms_are_found() {
    let dir = project();
    std::fs::write(dir.join("eval-helpers.lisp"), EVALUATED_HELPERS).unwrap();
    std::fs::write(dir.join("eval-uses.lisp"), EVALUATED_USES).unwrap();
    let pattern = |p: &str| {
        shown(
            &search(&dir, |r| r.name_pattern = Some(p.into()))
                .definitions
                .unwrap(),
        )
    };
    // `#.(loop ...)`: `ldb`, `logbitp`, `ecase`, a project function, `collect into`.
    // (A pattern without literals: the `macrolet`'s own text cannot make `ref/`, whose
    // pieces are in the helper's file, so a literal would not read it, docs/find.md.)
    let mut all = pattern(".");
    all.retain(|d| d.contains("ref/"));
    assert_eq!(
        all,
        [
            "defun ub16ref/le eval-uses.lisp:2 via #. (2)",
            "defun ub16ref/be eval-uses.lisp:2 via #. (2)",
            "defun ub32ref/le eval-uses.lisp:2 via #. (2)",
            "defun ub32ref/be eval-uses.lisp:2 via #. (2)",
            "defun sb64ref/le eval-uses.lisp:12 via define-readers (12)",
            "defun sb64ref/be eval-uses.lisp:12 via define-readers (12)",
        ]
    );
    // By name too: the read-time form is visited although it does not spell the name.
    assert_eq!(
        shown(
            &search(&dir, |r| r.name = Some("ub32ref/be".into()))
                .definitions
                .unwrap()
        ),
        ["defun ub32ref/be eval-uses.lisp:2 via #. (2)"]
    );
    // `cond` and `when` assigning the macro's variables, `symbol-package` of a keyword,
    // a `loop` with `when ... collect`.
    assert_eq!(
        pattern("accepts-p|generate-bindings"),
        [
            "defmethod accepts-p ((eql :values)) eval-uses.lisp:31 via defbinding (31)",
            "defmethod generate-bindings ((eql :values)) eval-uses.lisp:31 via defbinding (31)",
            "defmethod generate-bindings (symbol) eval-uses.lisp:32 via defbinding (32)",
        ]
    );
    // Through the binary.
    let out = Command::new(BIN)
        .args(["find", "--name", "ub16ref/be", "--root"])
        .arg(&dir)
        .arg(&dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("eval-uses.lisp:2:defun ub16ref/be, via #. at 2: #.(loop"),
        "{text}"
    );
}

/// A helper whose value is another helper's (clx's `getify` ending in `xintern`): a search
/// by name learns it as a search by pattern does, so M-. finds what a pattern lists.
#[test]
fn a_name_made_through_a_helper_calling_a_helper_is_found_by_name() {
    let dir = project();
    std::fs::write(
        dir.join("forwarding.lisp"),
        "(defun xintern (&rest parts) (intern (format nil \"~{~a~}\" parts)))
(defun getify (name) (xintern name '-get))
(defmacro define-accessor (name) `(defmacro ,(getify name) (x) x))
(define-accessor card32)
",
    )
    .unwrap();
    let by = |edit: &dyn Fn(&mut FindRequest)| shown(&search(&dir, edit).definitions.unwrap());
    let expected = ["defmacro card32-get forwarding.lisp:4 via define-accessor (4)"];
    assert_eq!(by(&|r| r.name = Some("card32-get".into())), expected);
    assert_eq!(
        by(&|r| r.name_pattern = Some("^card32-get$".into())),
        expected
    );
}

/// A CFFI grovel file's enum and osicat's `macrolet` that defines a condition per
/// keyword of it, read at read time (`posix/early.lisp`, 123 conditions SBCL records).
const ENUM_DECLARED: &str = "(in-package :posix)
(constantenum errno-values
  ((:eperm \"EPERM\"))
  ((:enoent \"ENOENT\") :optional t)
  .
  #+windows nil
  #-windows
  #.'(((:estale \"ESTALE\"))))
";
const ENUM_USED: &str = "(in-package :posix)
(macrolet
    ((define-posix-errors (keywords)
       `(progn
          ,@(loop for kw in keywords collect
                  (let ((cond-name (intern (symbol-name kw))))
                    `(define-condition ,cond-name (posix-error) ()))))))
  (define-posix-errors
      #.(foreign-enum-keyword-list 'errno-values)))
";

#[test]
fn a_foreign_enum_read_at_read_time_gives_its_keywords() {
    let dir = project();
    std::fs::write(dir.join("unixint.lisp"), ENUM_DECLARED).unwrap();
    std::fs::write(dir.join("early.lisp"), ENUM_USED).unwrap();
    let names = |edit: &dyn Fn(&mut FindRequest)| -> Vec<String> {
        search(&dir, edit)
            .definitions
            .unwrap()
            .iter()
            .filter(|d| d.kind == "define-condition")
            .map(|d| format!("{} {}:{}", d.name, d.file, d.line))
            .collect()
    };
    let all = [
        "eperm early.lisp:8",
        "enoent early.lisp:8",
        "estale early.lisp:8",
    ];
    assert_eq!(names(&|r| r.name_pattern = Some(".".into())), all);
    // By name: the `macrolet` does not spell it; the enum's keywords do.
    assert_eq!(
        names(&|r| r.name = Some("estale".into())),
        ["estale early.lisp:8"]
    );
    // The enum's branches are read under the features.
    assert_eq!(
        names(&|r| {
            r.name_pattern = Some(".".into());
            r.features = Some(vec!["windows".into()]);
        }),
        all[..2]
    );
    // An enum declared twice is not known (which one SBCL reads is not known).
    std::fs::write(dir.join("unixint-2.lisp"), ENUM_DECLARED).unwrap();
    assert!(names(&|r| r.name_pattern = Some(".".into())).is_empty());
}
