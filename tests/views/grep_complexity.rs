//! The grep of a text file over the size cap (streamed, docs/views.md#text-filtered-view)
//! grows linearly with the file on the shapes that could make it quadratic: every line a
//! match, no match under a context as large as the page (the kept leading context turns
//! over on every line), matches every few lines with overlapping context, and one line
//! longer than the cap. CPU time of the test thread at n and 4n, as
//! tests/reader/complexity.rs measures it.

use crate::common;

use common::cpu::cost;
use lisp_read_file::grammar::Grammar;
use lisp_read_file::guard::Guard;
use lisp_read_file::tool::{self, ReadRequest};
use lisp_read_file::view::Mode;
use std::fs;

/// Linear work gives 4; quadratic 16.
const MAX_RATIO: f64 = 10.0;
/// The size cap: every file here is over it.
const CAP: u64 = 64 * 1024;

type Shape = (&'static str, fn(usize) -> String, usize, usize);

fn lines(n: usize, each: impl Fn(usize) -> String) -> String {
    let mut out = String::new();
    let mut i = 0;
    while out.len() < n {
        out.push_str(&each(i));
        i += 1;
    }
    out
}

fn shapes() -> Vec<Shape> {
    vec![
        (
            "every line a match",
            |n| lines(n, |i| format!("hit {i}\n")),
            5,
            2000,
        ),
        (
            "no match, context as large as the page",
            |n| lines(n, |i| format!("line {i}\n")),
            2000,
            2000,
        ),
        (
            "a match every 7 lines, overlapping context",
            |n| {
                lines(n, |i| {
                    if i % 7 == 0 {
                        format!("hit {i}\n")
                    } else {
                        format!("l {i}\n")
                    }
                })
            },
            5,
            usize::MAX,
        ),
        (
            "a match every 1,000 lines under a context of 500",
            |n| {
                lines(n, |i| {
                    if i % 1000 == 0 {
                        format!("hit {i}\n")
                    } else {
                        format!("l {i}\n")
                    }
                })
            },
            500,
            usize::MAX,
        ),
        (
            "one line longer than the cap",
            |n| format!("{}hit\n", "x".repeat(n)),
            5,
            2000,
        ),
    ]
}

#[test]
fn the_streamed_grep_is_linear() {
    let dir = std::env::temp_dir().join(format!("lrf-grep-complexity-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let guard = Guard::confined(std::slice::from_ref(&dir), CAP).unwrap();
    let grammar = Grammar::builtin();
    let mut failures = Vec::new();
    for (name, make, context, limit) in shapes() {
        let run = |file: &str, size: usize| {
            fs::write(dir.join(file), make(size)).unwrap();
            let mut request = ReadRequest::new(file);
            request.content_pattern = Some("hit".into());
            request.context_lines = context;
            request.limit = limit;
            let (guard, grammar) = (&guard, &grammar);
            move || {
                let r = tool::read(guard, grammar, &request).unwrap();
                assert_eq!(r.mode, Mode::TextFiltered, "{}", r.content);
                std::hint::black_box(r);
            }
        };
        let mut line = String::new();
        for n in [1 << 20, 2 << 20, 4 << 20] {
            let a = cost(&run("small.log", n));
            let b = cost(&run("large.log", 4 * n));
            let ratio = b as f64 / a as f64;
            line = format!("{name}: {a} ns -> {b} ns at 4x, ratio {ratio:.1}");
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
    let _ = fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "superlinear:\n{}", failures.join("\n"));
}
