//! `find` and derived definitions (docs/find.md#derived-definitions), `features`, files
//! over the size cap and definitions nested in `labels`/`flet`, through the library and
//! the real binary.

use lisp_read_file::cancel::CancelToken;
use lisp_read_file::find::{find, Definition, FindRequest, FindResult};
use lisp_read_file::grammar::Grammar;
use lisp_read_file::guard::Guard;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");

const LEXER: &str = "(in-package :cl-ppcre)

(defstruct (lexer (:constructor make-lexer-internal (str len))
                  (:conc-name lexer-))
  \"The lexer.\"
  (str \"\" :type string :read-only t)
  (len 0 :type fixnum)
  (reg 0 :type fixnum)
  (last-pos nil :type list))

(defstruct (token-lexer (:include lexer) (:copier nil))
  kind)
";

const CLASSES: &str = "(defclass regex ()
  ((offset :initarg :offset
           :accessor offset)
   (len :reader len :writer (setf len*))))

(define-condition ppcre-error (simple-error)
  ((pos :initarg :pos :reader ppcre-error-pos)))

(defgeneric area (shape)
  (:documentation \"Area.\")
  (:method ((s square)) (* (side s) (side s)))
  (:method :around (s) (call-next-method)))

(defsetf lexer-pos set-lexer-pos)

(defpackage \"CL-PPCRE\" (:nicknames #:ppcre) (:use :cl))
";

fn project(files: &[(&str, &str)]) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("lrf-find-derived-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    dir
}

fn search(dir: &Path, edit: impl FnOnce(&mut FindRequest)) -> FindResult {
    search_capped(dir, 1 << 20, edit)
}

fn search_capped(dir: &Path, cap: u64, edit: impl FnOnce(&mut FindRequest)) -> FindResult {
    let guard = Guard::confined(&[dir.to_path_buf()], cap).unwrap();
    let mut request = FindRequest::new(".");
    edit(&mut request);
    find(&guard, &Grammar::builtin(), &request, &CancelToken::new()).unwrap()
}

fn by_name(dir: &Path, name: &str) -> Vec<Definition> {
    search(dir, |r| r.name = Some(name.into()))
        .definitions
        .unwrap()
}

/// `kind name file:line (form kind line)`.
fn shown(defs: &[Definition]) -> Vec<String> {
    defs.iter()
        .map(|d| {
            let form = d
                .form
                .as_ref()
                .map(|f| format!(" ({} {} {}-{})", f.kind, f.name, f.line, f.end_line))
                .unwrap_or_default();
            format!(
                "{} {} {}:{}:{}{form}",
                d.kind, d.name, d.file, d.line, d.column
            )
        })
        .collect()
}

#[test]
fn structure_names_are_found_at_their_slot_or_option() {
    let dir = project(&[("lexer.lisp", LEXER)]);
    assert_eq!(
        shown(&by_name(&dir, "make-lexer-internal")),
        ["constructor make-lexer-internal lexer.lisp:3:18 (defstruct lexer 3-9)"]
    );
    assert_eq!(
        shown(&by_name(&dir, "copy-lexer")),
        ["copier copy-lexer lexer.lisp:3:12 (defstruct lexer 3-9)"]
    );
    assert_eq!(
        shown(&by_name(&dir, "LEXER-REG")),
        ["accessor lexer-reg lexer.lisp:8:2 (defstruct lexer 3-9)"]
    );
    assert_eq!(
        shown(&by_name(&dir, "(setf lexer-len)")),
        ["setf-accessor (setf lexer-len) lexer.lisp:7:2 (defstruct lexer 3-9)"]
    );
    // Read-only: no setf accessor. The default constructor is replaced.
    assert!(by_name(&dir, "(setf lexer-str)").is_empty());
    assert!(by_name(&dir, "make-lexer").is_empty());
    // Included slots, with the child's prefix, at the :include option.
    assert_eq!(
        shown(&by_name(&dir, "token-lexer-reg")),
        ["accessor token-lexer-reg lexer.lisp:11:24 (defstruct token-lexer 11-12)"]
    );
    assert!(by_name(&dir, "copy-token-lexer").is_empty());
    assert_eq!(by_name(&dir, "token-lexer-p").len(), 1);
}

#[test]
fn an_included_structure_in_another_file_is_found() {
    let dir = project(&[
        ("a.lisp", "(defstruct (child (:include parent)) c)\n"),
        ("b.lisp", "(defstruct parent px (q 1 :read-only t))\n"),
    ]);
    let found = search(&dir, |r| r.name_pattern = Some("^child-".into()));
    assert_eq!(
        shown(&found.definitions.unwrap()),
        [
            "predicate child-p a.lisp:1:12 (defstruct child 1-1)",
            "accessor child-px a.lisp:1:18 (defstruct child 1-1)",
            "accessor child-q a.lisp:1:18 (defstruct child 1-1)",
            "accessor child-c a.lisp:1:37 (defstruct child 1-1)",
        ]
    );
    assert_eq!(
        shown(&by_name(&dir, "(setf child-px)")),
        ["setf-accessor (setf child-px) a.lisp:1:18 (defstruct child 1-1)"]
    );
}

#[test]
fn class_slots_methods_setf_expanders_and_nicknames() {
    let dir = project(&[("classes.lisp", CLASSES)]);
    assert_eq!(
        shown(&by_name(&dir, "offset")),
        ["accessor offset classes.lisp:2:3 (defclass regex 1-4)"]
    );
    assert_eq!(
        shown(&by_name(&dir, "(setf offset)")),
        ["setf-accessor (setf offset) classes.lisp:2:3 (defclass regex 1-4)"]
    );
    assert_eq!(
        shown(&by_name(&dir, "(setf len*)")),
        ["writer (setf len*) classes.lisp:4:3 (defclass regex 1-4)"]
    );
    assert_eq!(
        shown(&by_name(&dir, "ppcre-error-pos")),
        ["reader ppcre-error-pos classes.lisp:7:3 (define-condition ppcre-error 6-7)"]
    );
    let area = by_name(&dir, "area");
    assert_eq!(
        area.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(),
        ["area", "area (square)", "area :around (t)"]
    );
    assert_eq!(
        shown(&by_name(&dir, "(setf lexer-pos)")),
        ["setf-expander (setf lexer-pos) classes.lisp:14:9 (defsetf lexer-pos 14-14)"]
    );
    assert_eq!(shown(&by_name(&dir, "ppcre")).len(), 1);
    assert_eq!(
        shown(&by_name(&dir, "cl-ppcre"))[0].split(' ').next(),
        Some("package")
    );
}

#[test]
fn kinds_keep_a_derived_kind_or_the_operator_that_makes_it() {
    let dir = project(&[("lexer.lisp", LEXER), ("classes.lisp", CLASSES)]);
    let kinds = |kinds: &[&str], pattern: &str| {
        search(&dir, |r| {
            r.name_pattern = Some(pattern.into());
            r.kinds = Some(kinds.iter().map(|k| k.to_string()).collect());
        })
        .definitions
        .unwrap()
        .iter()
        .map(|d| format!("{} {}", d.kind, d.name))
        .collect::<Vec<_>>()
    };
    assert_eq!(
        kinds(&["constructor"], "lexer"),
        [
            "constructor make-lexer-internal",
            "constructor make-token-lexer"
        ]
    );
    assert_eq!(
        kinds(&["defclass"], "offset"),
        ["accessor offset", "setf-accessor (setf offset)"]
    );
    assert_eq!(kinds(&["defun"], "offset"), Vec::<String>::new());
}

#[test]
fn the_text_view_names_the_form_that_makes_a_definition() {
    let dir = project(&[("lexer.lisp", LEXER)]);
    let out = Command::new(BIN)
        .args(["find", "--name", "lexer-reg", "--root"])
        .arg(&dir)
        .arg(&dir)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("lexer.lisp:8:accessor lexer-reg, made by 3: (defstruct (lexer"),
        "{text}"
    );
    let out = Command::new(BIN)
        .args(["find", "--name", "copy-lexer", "--json", "--body", "--root"])
        .arg(&dir)
        .arg(&dir)
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let d = &json["definitions"][0];
    assert_eq!(d["kind"], "copier");
    assert_eq!(d["form"]["kind"], "defstruct");
    assert_eq!(d["form"]["name"], "lexer");
    assert!(d["body"].as_str().unwrap().starts_with("(defstruct (lexer"));
}

#[test]
fn the_collapsed_view_expands_the_form_that_makes_a_derived_name() {
    let dir = project(&[("lexer.lisp", LEXER)]);
    let out = Command::new(BIN)
        .args(["-n", "copy-lexer", "--root"])
        .arg(&dir)
        .arg(dir.join("lexer.lisp"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("  (reg 0 :type fixnum)"), "{text}");
}

#[test]
fn features_leave_out_excluded_definitions_and_uses() {
    let dir = project(&[(
        "f.lisp",
        "#+ccl (defun foo () 1)\n#-ccl (defun foo () 2)\n(progn #+ccl (defun bar ()) (defun bar ()))\n(defun use () (list #+ccl (foo) #-(or ccl) (foo)))\n",
    )]);
    let lines = |features: Option<&[&str]>, edit: &dyn Fn(&mut FindRequest)| {
        let result = search(&dir, |r| {
            edit(r);
            r.features = features.map(|f| f.iter().map(|s| s.to_string()).collect());
        });
        let mut lines: Vec<usize> = Vec::new();
        for d in result.definitions.into_iter().flatten() {
            lines.push(d.line);
        }
        for r in result.references.into_iter().flatten() {
            lines.extend(r.uses.iter().map(|u| u.column));
        }
        lines
    };
    let name_foo = |r: &mut FindRequest| r.name = Some("foo".into());
    let name_bar = |r: &mut FindRequest| r.name = Some("bar".into());
    let symbol_foo = |r: &mut FindRequest| r.symbol = Some("foo".into());
    assert_eq!(lines(None, &name_foo), [1, 2]);
    assert_eq!(lines(Some(&["sbcl"]), &name_foo), [2]);
    assert_eq!(lines(Some(&["ccl"]), &name_foo), [1]);
    assert_eq!(lines(Some(&["sbcl"]), &name_bar), [3]);
    assert_eq!(lines(None, &name_bar), [3, 3]);
    // Uses: columns of the uses; line 4 holds two, one per branch.
    assert_eq!(lines(None, &symbol_foo), [13, 13, 27, 44]);
    assert_eq!(lines(Some(&["sbcl"]), &symbol_foo), [13, 44]);
}

#[test]
fn features_leave_out_slots_only_other_implementations_read() {
    // hunchentoot's acceptor: `#+:lispworks (process :accessor acceptor-process ...)`.
    let dir = project(&[(
        "acceptor.lisp",
        "(defclass acceptor ()\n  (#+:lispworks\n   (process :accessor acceptor-process)\n   (port :reader acceptor-port)))\n",
    )]);
    let names = |features: Option<Vec<String>>| {
        search(&dir, |r| {
            r.name_pattern = Some("^acceptor-".into());
            r.features = features;
        })
        .definitions
        .unwrap()
        .iter()
        .map(|d| d.name.clone())
        .collect::<Vec<_>>()
    };
    assert_eq!(names(None), ["acceptor-process", "acceptor-port"]);
    assert_eq!(names(Some(vec!["sbcl".into()])), ["acceptor-port"]);
}

#[test]
fn a_file_over_the_size_cap_is_searched() {
    let mut big = String::from("(defun first-one () 1)\n");
    while big.len() < 3000 {
        big.push_str("(defparameter *filler* \"0123456789012345678901234567890123456789\")\n");
    }
    big.push_str("(defun last-one () 2)\n");
    let dir = project(&[
        ("big.lisp", &big),
        ("small.lisp", "(defun last-one () 3)\n"),
    ]);
    let result = search_capped(&dir, 1000, |r| r.name = Some("last-one".into()));
    assert_eq!(
        result
            .definitions
            .unwrap()
            .iter()
            .map(|d| d.file.as_str())
            .collect::<Vec<_>>(),
        ["big.lisp", "small.lisp"]
    );
    assert!(
        result.files_skipped.is_empty(),
        "{:?}",
        result.files_skipped
    );
    // A file named alone too; over 32 times the cap it is refused.
    let guard = Guard::confined(std::slice::from_ref(&dir), 1000).unwrap();
    let mut request = FindRequest::new("big.lisp");
    request.name = Some("first-one".into());
    let one = find(&guard, &Grammar::builtin(), &request, &CancelToken::new()).unwrap();
    assert_eq!(one.total, 1);
    let skipped = search_capped(&dir, 50, |r| r.name = Some("last-one".into()));
    assert_eq!(skipped.files_skipped.len(), 1);
    assert_eq!(skipped.total, 1);
}

/// A file over the cap is searched, so its own definer macros and the uses its macros
/// write are too: the passes that learn macros and find calls through them read it as
/// the search does (it was left out of them, and `(defthing alpha)` in it made nothing).
#[test]
fn a_file_over_the_size_cap_teaches_its_macros() {
    let mut big = String::from(
        "(defmacro defthing (name) `(defun ,(symbolicate name \"-P\") ()))\n\
         (defmacro with-thing ((x) &body body) `(let ((,x (open-thing))) (write-delim ,x) ,@body))\n\
         (defthing alpha)\n\
         (defun user () (with-thing (y) (print y)))\n",
    );
    while big.len() < 3000 {
        big.push_str(";; filler filler filler filler filler filler filler filler\n");
    }
    let dir = project(&[("big.lisp", &big), ("small.lisp", "(defthing beta)\n")]);
    let names = |name: &str| {
        search_capped(&dir, 1000, |r| r.name = Some(name.into()))
            .definitions
            .unwrap()
            .iter()
            .map(|d| format!("{} {} {}:{}", d.kind, d.name, d.file, d.line))
            .collect::<Vec<_>>()
    };
    assert_eq!(names("alpha-p"), ["defun alpha-p big.lisp:3"]);
    assert_eq!(names("beta-p"), ["defun beta-p small.lisp:1"]);
    let callers = search_capped(&dir, 1000, |r| r.callers = Some("write-delim".into()));
    let shown: Vec<_> = callers
        .callers
        .unwrap()
        .iter()
        .map(|c| format!("{} {}", c.name.as_deref().unwrap_or("-"), c.line))
        .collect();
    assert_eq!(
        shown,
        ["with-thing 2", "user 4"],
        "the use with-thing writes"
    );
}

#[test]
fn global_definitions_inside_labels_and_flet_are_found() {
    let dir = project(&[(
        "nested.lisp",
        "(labels ((helper (x) x))\n  (defun !index (y) (helper y)))\n(flet ((f () 1))\n  (defmacro m () (f)))\n(locally (declare (optimize speed))\n  (defvar *v* 1))\n",
    )]);
    let found = search(&dir, |r| {
        r.name_pattern = Some("^(!index|m|\\*v\\*)$".into())
    });
    assert_eq!(
        found
            .definitions
            .unwrap()
            .iter()
            .map(|d| format!("{} {}", d.kind, d.line))
            .collect::<Vec<_>>(),
        ["defun 2", "defmacro 4", "defvar 6"]
    );
}

/// A structure of n slots makes 2n names; each must not repeat the whole form, whose
/// signature lists every slot: the answer stays linear in the form (it was quadratic: a
/// 4,000-slot structure gave 32 MB of definitions).
#[test]
fn the_names_of_a_wide_structure_cost_linear_space() {
    let slots = "(foo 0 :read-only nil) ".repeat(4_000);
    let dir = project(&[("wide.lisp", &format!("(defstruct wide {slots})\n"))]);
    let result = search(&dir, |r| r.name_pattern = Some("foo".into()));
    let definitions = result.definitions.unwrap();
    assert!(
        definitions.len() >= 1_000,
        "{} definitions",
        definitions.len()
    );
    let bytes: usize = definitions
        .iter()
        .map(|d| serde_json::to_string(d).unwrap().len())
        .sum();
    assert!(
        bytes < 2_000_000,
        "{bytes} bytes for {} definitions",
        definitions.len()
    );
}

/// Known misses found by the outside review on SBCL's tree and cl-asdf, none of which
/// the tests held; ignored until the model covers them (each assertion is what SBCL
/// itself records).
fn names_found(files: &[(&str, &str)], name: &str) -> Vec<String> {
    let dir = project(files);
    by_name(&dir, name)
        .iter()
        .map(|d| format!("{} {} {}:{}", d.kind, d.name, d.file, d.line))
        .collect()
}

/// SBCL's src/code/defbangstruct.lisp holds `#+nil (defmacro sb-xc:defstruct (&rest
/// args) `(push ...))`, and its `def!struct` writes `(sb-xc:defstruct ,@args)`. At top
/// level a call of `sb-xc:defstruct` is the definer table's `defstruct` ("the definer
/// table's entries stay what they are"); inside an expansion the learned macro takes its
/// place and makes nothing, so none of the accessors of SBCL's 28 `def!struct`s is found
/// (`find --name debug-info-source` on /usr/share/sbcl-source finds only sb-introspect's
/// own defun, and M-. on `sb-c::debug-info-source` lands there).
#[test]
fn a_learned_macro_does_not_replace_the_definer_table_inside_an_expansion() {
    let found = names_found(
        &[(
            "a.lisp",
            "(defmacro sb-xc:defstruct (&rest args) `(push (quote ,args) *x*))\n(defmacro def!struct (&rest args) `(progn (sb-xc:defstruct ,@args)))\n(def!struct point x)\n(sb-xc:defstruct other y)\n",
        )],
        "point-x",
    );
    assert_eq!(found, ["accessor point-x a.lisp:3"]);
}

/// A structure a macro writes that includes one a macro writes (lparallel's `defslots`,
/// SBCL's `def!struct`): the included slots' accessors are made at the call, when the
/// parent's call is read too (a search of every name).
#[test]
fn an_included_structure_written_by_a_macro_gives_its_accessors_to_a_pattern() {
    let dir = project(&[
        ("a.lisp", "(defmacro def!struct (&rest args) `(defstruct ,@args))\n"),
        (
            "b.lisp",
            "(def!struct (debug-info (:copier nil)) (name 0) (source nil))\n(def!struct (compiled-debug-info (:include debug-info)) fun-map)\n",
        ),
    ]);
    let found: Vec<String> = search(&dir, |r| r.name_pattern = Some(".".into()))
        .definitions
        .unwrap()
        .iter()
        .filter(|d| d.name.contains("compiled-debug-info-"))
        .map(|d| format!("{} {} {}:{}", d.kind, d.name, d.file, d.line))
        .collect();
    assert_eq!(
        found,
        [
            "predicate compiled-debug-info-p b.lisp:2",
            "accessor compiled-debug-info-fun-map b.lisp:2",
            "setf-accessor (setf compiled-debug-info-fun-map) b.lisp:2",
            "accessor compiled-debug-info-name b.lisp:2",
            "setf-accessor (setf compiled-debug-info-name) b.lisp:2",
            "accessor compiled-debug-info-source b.lisp:2",
            "setf-accessor (setf compiled-debug-info-source) b.lisp:2",
        ]
    );
}

/// `(def!struct (compiled-debug-info (:include debug-info)) ...)`: the accessors of the
/// included slots of a structure a macro writes (SBCL's `compiled-debug-info-source`),
/// by name: the parent's call does not spell the name, so it is not read.
#[test]
#[ignore = "model: a search by name does not read the call that writes an included structure"]
fn an_included_structure_written_by_a_macro_gives_its_accessors() {
    let found = names_found(
        &[
            ("a.lisp", "(defmacro def!struct (&rest args) `(defstruct ,@args))\n"),
            (
                "b.lisp",
                "(def!struct (debug-info (:copier nil)) (name 0) (source nil))\n(def!struct (compiled-debug-info (:include debug-info)) fun-map)\n",
            ),
        ],
        "compiled-debug-info-source",
    );
    assert_eq!(found, ["accessor compiled-debug-info-source b.lisp:2"]);
}

/// cl-asdf's `defparameter*` (upgrade.lisp) names a function with `(string-trim "*"
/// var)`, a pure builder not among those computed: SBCL records
/// `%compute-asdf-session-class-value` at session.lisp:29, find nothing.
#[test]
#[ignore = "model: string-trim is not a computed name builder"]
fn string_trim_builds_a_name() {
    let found = names_found(
        &[(
            "a.lisp",
            "(defmacro defparameter* (var value)\n  (let* ((name (string-trim \"*\" var))\n         (valfun (intern (format nil \"%~A-~A-~A\" :compute name :value))))\n    `(progn (defun ,valfun () ,value)\n            (defvar ,var (,valfun)))))\n(defparameter* *asdf-session-class* 'session)\n",
        )],
        "%compute-asdf-session-class-value",
    );
    assert_eq!(found, ["defun %compute-asdf-session-class-value a.lisp:6"]);
}

/// A chain of 200,000 quotes in a macro's template was read into as many nested values
/// (lists are read at most 48 deep, prefixes were not bounded), and freeing them
/// overflowed the stack: the process aborted. Through the real binary, so that an abort
/// fails this test and not the test binary.
#[test]
fn a_long_chain_of_quotes_in_a_template_is_bounded() {
    let quotes = "'".repeat(200_000);
    let dir = project(&[(
        "q.lisp",
        &format!("(defmacro m2 (x) `(defun ,x () {quotes}y))\n(m2 made-fn)\n"),
    )]);
    let out = Command::new(BIN)
        .args(["find", "--name", "made-fn", "--detail", "names"])
        .arg(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(stdout.contains("q.lisp:2:defun made-fn"), "{stdout}");
}
