//! Seven paths an audit of list lookups found quadratic (docs/decisions.md, "2026-11-28:
//! seven list lookups made linear"): each family drives one, and must cost about 4× at
//! 4× the size (`find_linearity`). The kept files of the MCP server (`find/kept.rs`) and
//! its held requests (`src/mcp/transport/held.rs`) are measured in `tests/mcp`.

use crate::find_linearity::{
    assert_find_costs_like_code_from, assert_find_linear, assert_find_linear_from, Family,
};

/// Macros writing a `defmacro` (a level of definers), and one macro naming the first
/// whose template writes 16 calls per definer: each call was compared with every name of
/// the level (`find/through/made.rs`).
fn definers_and_a_template_of_many_calls(n: usize) -> Vec<u8> {
    let count = n / 215;
    let mut v = String::new();
    for i in 0..count {
        v.push_str(&format!(
            "(defmacro d{i:06} (name) `(defmacro ,name () '(foo)))\n"
        ));
    }
    v.push_str("(defmacro w () 'd000000 `(progn");
    for i in 0..16 * count {
        v.push_str(&format!(" (x{i:06})"));
    }
    v.push_str("))\n(defun bar () (foo))\n");
    v.into_bytes()
}

/// One line of `defmacro`s after a reader conditional: each one's prefix on the line held
/// the ones before it, read again (`find/through.rs`, the fast path of line starts).
fn defmacros_on_one_line(n: usize) -> Vec<u8> {
    let mut v = "#+sbcl".to_string();
    let mut i = 0;
    while v.len() < n {
        v.push_str(&format!(" (defmacro m{i:06} () `(foo))"));
        i += 1;
    }
    v.push_str("\n(defun bar () (m000001))\n");
    v.into_bytes()
}

/// `m` defined by as many `defmacro`s as `target` calls undefined operators inside
/// `(m ...)`: each call looked at every definition of `m` (`find/callees.rs`).
fn a_macro_defined_as_often_as_calls_under_it(n: usize) -> Vec<u8> {
    let count = n / 46;
    let mut v = "(defmacro m (&body b) `(progn ,@b))\n".repeat(count);
    v.push_str("(defun target () (m");
    for i in 0..count {
        v.push_str(&format!(" (u{i:06})"));
    }
    v.push_str("))\n");
    v.into_bytes()
}

#[test]
fn callers_and_callees_through_many_definitions_cost_linear_time() {
    let families: Vec<(&'static str, Family)> = vec![
        (
            "definers and a template of many calls",
            definers_and_a_template_of_many_calls,
        ),
        ("defmacros on one line", defmacros_on_one_line),
        (
            "a macro defined as often as calls under it",
            a_macro_defined_as_often_as_calls_under_it,
        ),
    ];
    assert_find_linear(
        "membership-calls",
        families,
        vec![
            ("callers", |r| r.callers = Some("foo".into())),
            ("callees", |r| r.callees = Some("target".into())),
        ],
    );
}

/// Macros whose computed templates call one project function of as many calls: each
/// macro walked the whole function again (`model/expand/mod.rs`, `Macros::finish`).
fn macros_calling_one_long_function(n: usize) -> Vec<u8> {
    let count = n / 55;
    let mut v = "(defun f (x) (list x".to_string();
    for i in 0..count {
        v.push_str(&format!(" (a{i:06} x)"));
    }
    v.push_str("))\n");
    for i in 0..count {
        v.push_str(&format!("(defmacro m{i:06} (x) `(progn ,(f x) ,@x))\n"));
    }
    v.push_str("(m000000 (defun n1-v ()))\n");
    v.into_bytes()
}

/// A macro destructuring a long pattern in a loop, called once per 40 of its variables:
/// each evaluation read, bound and restored the pattern without spending steps
/// (`model/expand/eval/control.rs`).
fn a_long_pattern_destructured_in_a_loop(n: usize) -> Vec<u8> {
    let mut v = "(defmacro m (n)\n  (let ((r nil))\n    (dolist (x '(a0 a1 a2 a3 a4 a5 a6 a7 a8 a9))\n      (destructuring-bind (".to_string();
    let mut k = 0;
    while v.len() < n - n / 20 {
        v.push_str(&format!(" v{k}"));
        k += 1;
    }
    v.push_str(") nil (push x r)))\n    `(defun ,(symbolicate n '-v) () ',r)))\n");
    v.push_str(&"(m n1)\n".repeat(k / 40));
    v.into_bytes()
}

/// A macro destructuring a long quoted list: taking its parts one at a time copied the
/// rest of the list at each (`model/expand/eval/destructure.rs`), the square of its length
/// and not charged to the budget (10 KB of such a pattern cost 81,605 M instructions).
fn a_long_list_destructured(n: usize) -> Vec<u8> {
    let k = n / 14;
    let vars: String = (0..k).map(|i| format!(" v{i}")).collect();
    let values: String = (0..k).map(|i| format!(" e{i}")).collect();
    format!(
        "(defmacro m (n)\n  (let ((r nil))\n    (dolist (x '(a0 a1 a2 a3 a4 a5 a6 a7 a8 a9))\n      (destructuring-bind ({vars}) '({values}) (push v{last} r)))\n    `(defun ,(symbolicate n '-v) () ',r)))\n(m n1)\n",
        last = k - 1
    )
    .into_bytes()
}

#[test]
fn destructuring_long_lists_costs_what_code_costs() {
    assert_find_costs_like_code_from(
        "membership-lists",
        vec![("a long list destructured", a_long_list_destructured)],
        vec![("name", |r| r.name = Some("n1-v".into()))],
        12_000,
    );
}

#[test]
fn expansions_of_long_functions_cost_linear_time() {
    assert_find_linear(
        "membership-functions",
        vec![(
            "macros calling one long function",
            macros_calling_one_long_function,
        )],
        vec![("name", |r| r.name = Some("n1-v".into()))],
    );
}

#[test]
fn destructuring_long_patterns_costs_linear_time() {
    // Every byte may spend the expansion budget's 64 steps: smaller files.
    assert_find_linear_from(
        "membership-patterns",
        vec![(
            "a long pattern destructured in a loop",
            a_long_pattern_destructured_in_a_loop,
        )],
        vec![("name", |r| r.name = Some("n1-v".into()))],
        12_000,
    );
}
