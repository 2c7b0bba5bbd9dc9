//! Package resolution (docs/find.md#packages) does work linear in the input on adversarial
//! files: many packages, long `:use` chains (forwards and backwards), many nicknames and
//! local nicknames, huge export lists, a package using many packages, many packages
//! exporting one name. As tests/project/find_complexity.rs: a file of size n and of size
//! 4n searched on the calling thread, the least of 3 runs of its CPU time compared; linear
//! work gives a ratio near 4, quadratic near 16; the test fails above 10 (measured again at
//! twice and four times the sizes first).

use crate::common;
use common::cpu::cost;
use lisp_read_file::cancel::CancelToken;
use lisp_read_file::find::{find, FindRequest};
use lisp_read_file::grammar::Grammar;
use lisp_read_file::guard::Guard;
use std::fmt::Write as _;
use std::fs;

const MAX_RATIO: f64 = 10.0;
const N: usize = if cfg!(debug_assertions) {
    25_000
} else {
    100_000
};

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

type Family = fn(usize) -> Vec<u8>;

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

type Request = (&'static str, fn(&mut FindRequest));

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
    let dir = std::env::temp_dir().join(format!("lrf-find-packages-cx-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let guard = Guard::confined(std::slice::from_ref(&dir), 64 << 20).unwrap();
    let grammar = Grammar::builtin();
    let (guard, grammar) = (&guard, &grammar);
    let mut failures = Vec::new();
    for (family, make) in families() {
        for (what, edit) in requests() {
            let run = |name: &str, bytes: &[u8]| {
                fs::write(dir.join(name), bytes).unwrap();
                let mut request = FindRequest::new(name);
                edit(&mut request);
                move || {
                    let result = find(guard, grammar, &request, &CancelToken::new()).unwrap();
                    std::hint::black_box(result);
                }
            };
            let mut line = String::new();
            for size in [N, 2 * N, 4 * N] {
                let work = run("small.lisp", &make(size));
                work();
                let a = cost(&work);
                let b = cost(&run("large.lisp", &make(4 * size)));
                let ratio = b as f64 / a as f64;
                line = format!(
                    "{what} / {family}: {:.2} ms -> {:.2} ms, ratio {ratio:.1}",
                    a as f64 / 1e6,
                    b as f64 / 1e6
                );
                eprintln!("{line}");
                if ratio <= MAX_RATIO || b < 1_000_000 {
                    line.clear();
                    break;
                }
            }
            if !line.is_empty() {
                failures.push(line);
            }
        }
    }
    let _ = fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "superlinear:\n{}", failures.join("\n"));
}
