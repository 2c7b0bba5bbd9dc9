//! Package resolution (docs/find.md#packages) does work linear in the input on adversarial
//! files: many packages, long `:use` chains (forwards and backwards), many nicknames and
//! local nicknames, huge export lists, a package using many packages, many packages
//! exporting one name. As tests/project/find_complexity.rs: a file of size n and of size
//! 4n searched on the calling thread, the least of 3 runs of its CPU time compared; linear
//! work gives a ratio near 4, quadratic near 16; the test fails above 10 (measured again at
//! twice and four times the sizes first).

use crate::find_linearity::{assert_find_linear, Family, Request};
use std::fmt::Write as _;

/// Text made by `unit(k)` for k = 0, 1, ... until it is `size` bytes, after `head(size)`
/// (a form whose length grows with the input) and before `tail`.
fn grow(size: usize, head: &dyn Fn(usize) -> String, unit: &dyn Fn(usize) -> String) -> Vec<u8> {
    let mut text = head(size);
    let mut k = 0;
    while text.len() < size {
        text.push_str(&unit(k));
        k += 1;
    }
    text.into_bytes()
}

/// `count` names `PREFIX0 PREFIX1 ...` (about `size` bytes for count = size / 8).
fn names(prefix: &str, count: usize) -> String {
    let mut s = String::new();
    for k in 0..count {
        let _ = write!(s, " :{prefix}{k}");
    }
    s
}

fn families() -> Vec<(&'static str, Family)> {
    vec![
        ("a :use chain, each package re-exporting foo", |n| {
            grow(n, &|_| String::new(), &|k| {
                format!(
                    "(defpackage :p{k} (:use :p{}) (:export :foo))\n(in-package :p{k})\n(defun foo{k} () (foo))\n",
                    k.saturating_sub(1)
                )
            })
        }),
        ("a :use chain resolved from its far end", |n| {
            grow(n, &|_| String::new(), &|k| {
                format!(
                    "(in-package :p{k})\n(defun foo{k} () (foo))\n(defpackage :p{k} (:use :p{}) (:export :foo))\n",
                    k + 1
                )
            })
        }),
        ("one package with many nicknames", |n| {
            let head = |n: usize| format!("(defpackage :p (:nicknames{}))\n", names("n", n / 16));
            grow(n, &head, &|k| format!("(in-package :n{k})\n(n{k}:foo)\n"))
        }),
        ("one package with many local nicknames", |n| {
            let head = |n: usize| {
                let mut s = String::from(
                    "(defpackage :p (:export :foo))\n(defpackage :q (:local-nicknames",
                );
                for k in 0..n / 16 {
                    let _ = write!(s, " (:l{k} :p)");
                }
                s.push_str("))\n(in-package :q)\n");
                s
            };
            grow(n, &head, &|k| format!("(l{k}:foo p:foo)\n"))
        }),
        ("a huge export list", |n| {
            let head = |n: usize| {
                format!(
                    "(defpackage :p (:use :cl) (:export :foo{}))\n(in-package :p)\n",
                    names("foo", n / 16)
                )
            };
            grow(n, &head, &|k| {
                format!("(defun foo{k} () (foo) (car foo))\n")
            })
        }),
        ("one package using many packages defined elsewhere", |n| {
            let head = |n: usize| {
                format!(
                    "(defpackage :top (:use{}))\n(in-package :top)\n",
                    names("u", n / 16)
                )
            };
            grow(n, &head, &|k| format!("(defun foo{k} () (foo))\n"))
        }),
        ("many packages exporting foo, one using them all", |n| {
            let head = |n: usize| {
                let mut s = String::new();
                for k in 0..n / 64 {
                    let _ = writeln!(s, "(defpackage :e{k} (:export :foo :foo{k}))");
                }
                let _ = writeln!(
                    s,
                    "(defpackage :top (:use{}))\n(in-package :top)",
                    names("e", n / 64)
                );
                s
            };
            grow(n, &head, &|k| {
                format!("(defun foo{k} () (foo) (e{k}:foo))\n")
            })
        }),
    ]
}

/// Many packages met at once: one form using a name through each, one package
/// re-exported by each, package definitions nested in one another, many definitions of
/// packages a pattern finds (an outside audit measured each quadratic, instructions 3.7
/// to 4.2 times at twice the size).
fn many_packages() -> Vec<(&'static str, Family)> {
    vec![
        ("one form using foo through many packages", |n| {
            grow(n, &|_| String::from("(defun bar ()\n"), &|k| {
                format!("  (p{k}::foo)\n")
            })
            .into_iter()
            .chain(*b")\n")
            .collect()
        }),
        ("one package re-exported by many packages", |n| {
            let head = |n: usize| {
                format!(
                    "(defpackage :p0 (:use :cl) (:export :foo{}))\n",
                    names("s", n / 16)
                )
            };
            grow(n, &head, &|k| {
                format!("(uiop:define-package :q{k} (:reexport :p0))\n(in-package :q{k})\n(foo)\n")
            })
        }),
        ("package definitions nested in package definitions", |n| {
            let depth = n / 12;
            format!(
                "(defun foo () (foo))\n(progn {}{})\n",
                "(defpackage ".repeat(depth),
                ")".repeat(depth)
            )
            .into_bytes()
        }),
        ("many package definitions a pattern finds", |n| {
            grow(n, &|_| String::new(), &|k| {
                format!("(defpackage :foo{k} (:use :cl) (:export :foo))\n")
            })
        }),
    ]
}

fn requests() -> Vec<Request> {
    vec![
        ("symbol", |r| r.symbol = Some("foo".into())),
        ("symbol with package", |r| r.symbol = Some("p:foo".into())),
        ("name", |r| r.name = Some("foo".into())),
        ("name with package", |r| r.name = Some("p0:foo".into())),
        ("name_pattern", |r| r.name_pattern = Some("foo".into())),
    ]
}

#[test]
fn package_resolution_is_linear_on_adversarial_files() {
    assert_find_linear("find-packages-cx", families(), requests());
}

#[test]
fn many_packages_at_once_cost_linear_time() {
    assert_find_linear("find-packages-many", many_packages(), requests());
}
