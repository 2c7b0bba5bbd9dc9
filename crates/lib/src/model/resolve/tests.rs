use super::*;
use crate::model::packages::read_file;

/// The table of the packages `source` defines.
fn table(source: &str) -> PackageTable {
    let file = read_file(source.as_bytes(), &|_, _| true, usize::MAX);
    PackageTable::new(&file.definitions)
}

/// The home package of `token` read in `current`, `?` appended when unresolved.
fn home(table: &mut PackageTable, current: &str, token: &str) -> String {
    let r = table.resolve(Some(current), &Written::parse(token));
    let mut s = r.package.unwrap_or_else(|| "#:".into());
    if r.unresolved {
        s.push('?');
    }
    s
}

const TWO: &str = r#"
(defpackage #:base (:use #:cl) (:export #:scan "PARSE" :shared))
(cl:defpackage :app
  (:use :cl :base)
  (:nicknames #:application "APP2")
  (:shadow #:car)
  (:shadowing-import-from :other #:shared)
  (:import-from "BASE" #:helper)
  (:local-nicknames (#:b #:base))
  (:export #:run))
(uiop:define-package :third (:use :app))
"#;

#[test]
fn unqualified_symbols_follow_uses_imports_and_shadows() {
    let mut t = table(TWO);
    assert_eq!(home(&mut t, "app", "scan"), "base");
    assert_eq!(home(&mut t, "app", "PARSE"), "base", "a string exported");
    assert_eq!(home(&mut t, "app", "mapcar"), "common-lisp");
    assert_eq!(home(&mut t, "app", "car"), "app", "shadowed");
    assert_eq!(home(&mut t, "app", "helper"), "base", "import-from");
    assert_eq!(home(&mut t, "app", "run"), "app");
    assert_eq!(home(&mut t, "app", "local-thing"), "app");
    // other is defined outside the scope: its shadowing import is unresolved.
    assert_eq!(home(&mut t, "app", "shared"), "other?");
    // third uses app, which exports run (its own) but not scan (inherited, not exported).
    assert_eq!(home(&mut t, "third", "run"), "app");
    assert_eq!(home(&mut t, "third", "scan"), "third");
    assert_eq!(
        home(&mut t, "third", "car"),
        "third",
        "CL is not used by third"
    );
}

#[test]
fn qualified_symbols_through_names_nicknames_and_local_nicknames() {
    let mut t = table(TWO);
    assert_eq!(home(&mut t, "cl-user", "base:scan"), "base");
    assert_eq!(home(&mut t, "cl-user", "APPLICATION::run"), "app");
    assert_eq!(home(&mut t, "cl-user", "app2:helper"), "base");
    assert_eq!(home(&mut t, "cl-user", "app:mapcar"), "common-lisp");
    assert_eq!(home(&mut t, "cl-user", "cl:car"), "common-lisp");
    assert_eq!(home(&mut t, "cl-user", "common-lisp:car"), "common-lisp");
    // b is app's local nickname for base, and nothing elsewhere.
    assert_eq!(home(&mut t, "app", "b:scan"), "base");
    assert_eq!(home(&mut t, "base", "b:scan"), "b?");
    assert_eq!(home(&mut t, "app", ":scan"), "keyword");
    assert_eq!(home(&mut t, "app", "#:scan"), "#:");
    assert_eq!(home(&mut t, "app", "|BASE|::|SCAN|"), "base");
}

#[test]
fn the_default_package_uses_common_lisp() {
    let mut t = table("");
    assert_eq!(
        t.resolve(None, &Written::parse("defun")).package.as_deref(),
        Some("common-lisp")
    );
    assert_eq!(home(&mut t, "cl-user", "my-function"), "common-lisp-user");
    assert_eq!(COMMON_LISP_SYMBOLS.lines().count(), 978);
}

#[test]
fn unknown_packages_are_unresolved() {
    let mut t = table("(defpackage :mine (:use :cl :alexandria))");
    assert_eq!(home(&mut t, "cl-user", "ppcre:scan"), "ppcre?");
    // mine uses alexandria, defined elsewhere: `when-let` may be either's.
    let r = t.resolve(Some("mine"), &Written::parse("when-let"));
    assert!(r.unresolved);
    assert_eq!(r.alternatives, ["mine", "alexandria"]);
    assert_eq!(home(&mut t, "mine", "car"), "common-lisp");
    let mut t = table("(defpackage :mine (:use :cl :elsewhere) (:export :run))");
    assert_eq!(home(&mut t, "mine", "run"), "mine", "exported: its own");
    // A current package defined elsewhere is taken to use CL.
    assert_eq!(home(&mut t, "elsewhere", "car"), "common-lisp?");
    assert_eq!(home(&mut t, "elsewhere", "thing"), "elsewhere?");
}

#[test]
fn the_first_in_use_order_wins_and_cycles_end() {
    let mut t = table(
        "(defpackage :a (:use :b) (:export :x)) (defpackage :b (:use :a) (:export :x))
         (defpackage :c (:use :d :e)) (defpackage :d (:export :y)) (defpackage :e (:export :y))",
    );
    assert_eq!(home(&mut t, "c", "y"), "d");
    let a = home(&mut t, "a", "x");
    assert!(a == "a" || a == "b", "{a}");
}

#[test]
fn may_be_compares_known_packages_exactly_and_unresolved_by_name() {
    let mut t = table(TWO);
    let base = t.resolve(None, &Written::parse("base:scan"));
    assert!(t
        .resolve(Some("app"), &Written::parse("scan"))
        .may_be(&base));
    assert!(!t
        .resolve(Some("third"), &Written::parse("scan"))
        .may_be(&base));
    let ppcre = t.resolve(None, &Written::parse("ppcre:scan"));
    assert!(ppcre.may_be(&t.resolve(None, &Written::parse("PPCRE::scan"))));
    assert!(!ppcre.may_be(&base));
}

#[test]
fn package_forms_read_as_data() {
    let source = r#"(in-package :cl-user)
#+nope (defpackage :hidden)
(eval-when (:compile-toplevel) (defpackage "WRAPPED" (:use "CL")))
(DEFPACKAGE |Odd| (:USE #:CL))
(in-package #:wrapped)
(defun f () (in-package :not-top-level))
(defun g () "(defpackage :in-a-string)" ; (defpackage :in-a-comment)
  1)
(eval-when () (locally (handler-bind () #+nope (defpackage :not-read) (defpackage :deep))))"#;
    let file = read_file(
        source.as_bytes(),
        &|plus, e| !(plus && e == b"nope"),
        usize::MAX,
    );
    let names: Vec<&str> = file.definitions.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["wrapped", "odd", "deep"]);
    assert_eq!(file.definitions[0].uses, ["cl"]);
    let packages: Vec<&str> = file.in_packages.iter().map(|(_, n)| n.as_str()).collect();
    assert_eq!(packages, ["cl-user", "wrapped"]);
    assert_eq!(file.current_at(0), None);
    assert_eq!(
        file.current_at(source.find("(defun").unwrap()),
        Some("wrapped")
    );
    assert!(read_file(
        b"(defun package-name-of (x) *package*)",
        &|_, _| true,
        usize::MAX
    )
    .definitions
    .is_empty());
}

#[test]
fn reexports_of_define_package() {
    let mut t = table(
        "(uiop:define-package :my/cl (:use :cl) (:reexport :cl))
         (uiop/package:define-package :app (:use :my/cl))
         (uiop:define-package :both (:use-reexport :my/cl))
         (defpackage :user (:use :both))",
    );
    assert_eq!(home(&mut t, "app", "car"), "common-lisp");
    assert_eq!(home(&mut t, "user", "car"), "common-lisp");
    assert_eq!(home(&mut t, "app", "own"), "app");
    // app uses my/cl but exports nothing: `car` is not external in app.
    let mut t = table("(uiop:define-package :my/cl (:use :cl) (:reexport :cl)) (defpackage :app (:use :my/cl)) (defpackage :user (:use :app))");
    assert_eq!(home(&mut t, "user", "car"), "user");
}
