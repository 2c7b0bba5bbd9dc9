//! `find --callers` and `--callees` do work linear in the file on adversarial inputs: a
//! file of size n and of size 4n, the CPU time of the calling thread compared (the method
//! of find_complexity.rs: the least of 3 runs of `CLOCK_THREAD_CPUTIME_ID`). Linear work
//! gives a ratio near 4, quadratic near 16; the test fails above 10 (measured again at
//! twice and four times the sizes first).

use crate::find_linearity::{assert_find_linear, Family, Request};

fn repeat(unit: &str, size: usize) -> Vec<u8> {
    unit.repeat(size / unit.len()).into_bytes()
}

fn wrapped(head: &str, unit: &str, tail: &str, size: usize) -> Vec<u8> {
    let mut v = head.as_bytes().to_vec();
    v.extend(repeat(unit, size));
    v.extend(tail.as_bytes());
    v
}

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
        ("computed operators nested in one template", |n| {
            let k = n / 20;
            let mut v = b"(defmacro w (x) `".to_vec();
            v.extend("(,(foo-of x) ".repeat(k).bytes());
            v.extend(")".repeat(k).bytes());
            v.extend(b")\n(w 1)\n");
            v
        }),
        ("computed operators that never close", |n| {
            wrapped("(defmacro w (x) `", "(,(foo-of x ", "", n)
        }),
        ("many computed operators, many writers", |n| {
            // Heads that never match, compared with a level of writers as large.
            let k = n / 120;
            let mut v =
                b"(defmacro w0 (x) `(,(intern (concatenate 'string \"F\" \"OO\")) ,x))\n".to_vec();
            for i in 0..k {
                v.extend(
                    format!(
                        "(defmacro a{i} (x) `(,(intern (concatenate 'string \"Z\" \"QQ\")) ,x))\n(defmacro b{i} (x) `(w0 ,x))\n"
                    )
                    .bytes(),
                );
            }
            v.extend(b"(b0 1)\n");
            v
        }),
        ("functions computing operators, spliced by macros", |n| {
            let k = n / 150;
            let mut v = b"(defun setter (ty) (if ty 'foo 'bar))\n".to_vec();
            for i in 0..k {
                v.extend(
                    format!(
                        "(defun s{i} (x) `((,(setter x) 1)))\n(defmacro m{i} (x) `(progn ,@(s{i} x)))\n(m{i} t)\n"
                    )
                    .bytes(),
                );
            }
            v
        }),
        ("a function's computed operators nested", |n| {
            let k = n / 20;
            let mut v = b"(defun foo-of (x) 'foo)\n(defun w (x) `".to_vec();
            v.extend("(,(foo-of x) ".repeat(k).bytes());
            v.extend(")".repeat(k).bytes());
            v.extend(b")\n(defmacro m (x) `(progn ,@(w x)))\n(m 1)\n");
            v
        }),
        ("definer calls writing computed operators", |n| {
            let k = n / 60;
            let mut v =
                b"(defun foo-of (x) 'foo)\n(defmacro def (name &rest body) `(defmacro ,name (x) ,@body))\n"
                    .to_vec();
            for i in 0..k {
                v.extend(format!("(def m{i} `(,(foo-of x) ,x))\n(m{i} 1)\n").bytes());
            }
            v
        }),
        ("reader conditionals", |n| {
            wrapped(
                "(defun foo () ",
                "#+(or foo bar) (foo) #-foo (foo) ",
                ")",
                n,
            )
        }),
        ("stacked failed conditionals", |n| {
            wrapped(
                "(defun foo () ",
                "#+(or) #-(and) (foo) (foo) (bar) ",
                ")",
                n,
            )
        }),
    ]
}

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
    assert_find_linear("callers-complexity", families(), requests());
}
