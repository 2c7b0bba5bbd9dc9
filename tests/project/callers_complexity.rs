//! `find --callers` and `--callees` do work linear in the file on adversarial inputs: a
//! file of size n and of size 4n, the CPU time of the calling thread compared (the method
//! of find_complexity.rs: the least of 3 runs of `CLOCK_THREAD_CPUTIME_ID`). Linear work
//! gives a ratio near 4, quadratic near 16; the test fails above 10 (measured again at
//! twice and four times the sizes first).

use crate::common;
use common::cpu::cost;
use lisp_read_file::cancel::CancelToken;
use lisp_read_file::find::{find, FindRequest};
use lisp_read_file::grammar::Grammar;
use lisp_read_file::guard::Guard;
use std::fs;

const MAX_RATIO: f64 = 10.0;
const N: usize = if cfg!(debug_assertions) {
    25_000
} else {
    100_000
};

fn repeat(unit: &str, size: usize) -> Vec<u8> {
    unit.repeat(size / unit.len()).into_bytes()
}

fn wrapped(head: &str, unit: &str, tail: &str, size: usize) -> Vec<u8> {
    let mut v = head.as_bytes().to_vec();
    v.extend(repeat(unit, size));
    v.extend(tail.as_bytes());
    v
}

type Family = fn(usize) -> Vec<u8>;

/// Files that stress what a call walk keeps: nesting, scopes, attribution, bindings.
fn families() -> Vec<(&'static str, Family)> {
    vec![
        ("one form, a call per list", |n| {
            wrapped("(defun f () ", "(foo) ", ")", n)
        }),
        ("deep nesting", |n| {
            let k = n / 8;
            let mut v = "(foo ".repeat(k).into_bytes();
            v.extend(")".repeat(k).bytes());
            v
        }),
        ("nested flet scopes, calls inside", |n| {
            let k = n / 30;
            let mut v = b"(defun f () ".to_vec();
            v.extend("(flet ((foo () (foo))) (foo) ".repeat(k).bytes());
            v.extend(")".repeat(k + 1).bytes());
            v
        }),
        ("many local names, one call deep inside", |n| {
            let k = n / 20;
            let mut v = b"(defun f () ".to_vec();
            for i in 0..k {
                v.extend(format!("(labels ((g{i} () 1)) ").bytes());
            }
            v.extend(b"(foo)");
            v.extend(")".repeat(k + 1).bytes());
            v
        }),
        ("definitions in one container, calls after them", |n| {
            let mut v = b"(progn ".to_vec();
            v.extend(repeat("(defun foo () (foo)) ", n / 2));
            v.extend(repeat("(foo) ", n / 2));
            v.push(b')');
            v
        }),
        ("long binding lists", |n| {
            wrapped("(defun foo () (let (", "(foo (foo)) ", ") (foo)))", n)
        }),
        ("methods on lines", |n| {
            repeat("(defmethod foo :around ((x foo)) (foo x #'foo 'foo))\n", n)
        }),
        ("loop clauses", |n| {
            wrapped(
                "(defun foo () (loop ",
                "for (foo x) in (foo) do (foo) ",
                "))",
                n,
            )
        }),
        ("backquote templates with commas", |n| {
            wrapped(
                "(defmacro foo () `(let ,(foo) ",
                ",@(foo) (foo ,x) ",
                "))",
                n,
            )
        }),
        ("an unclosed form", |n| {
            wrapped("(defun foo (", "(foo (", "", n)
        }),
        ("reader conditionals", |n| {
            wrapped(
                "(defun foo () ",
                "#+(or foo bar) (foo) #-foo (foo) ",
                ")",
                n,
            )
        }),
    ]
}

type Request = (&'static str, fn(&mut FindRequest));

fn requests() -> Vec<Request> {
    vec![
        ("callers", |r| r.callers = Some("foo".into())),
        ("callers of (setf foo)", |r| {
            r.callers = Some("(setf foo)".into())
        }),
        ("callers with features", |r| {
            r.callers = Some("foo".into());
            r.features = Some(vec!["sbcl".into()]);
        }),
        ("callees", |r| r.callees = Some("foo".into())),
        ("callees of f", |r| r.callees = Some("f".into())),
        ("callers, a small page", |r| {
            r.callers = Some("foo".into());
            r.limit = 3;
            r.offset = 2;
        }),
    ]
}

#[test]
fn callers_and_callees_are_linear_on_adversarial_files() {
    let dir = std::env::temp_dir().join(format!("lrf-callers-complexity-{}", std::process::id()));
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
