//! Work grows linearly with the input, for every view and every adversarial shape of file.
//!
//! Each case runs one view over a generated file of size n and of size 4n and compares the
//! CPU time the test thread spent: linear work gives a ratio near 4, quadratic work near
//! 16; the test fails above [`MAX_RATIO`]. Why this measure: the instruction counter
//! (`perf_event_open`) is not available on the virtual machines this runs on, and
//! valgrind is far too slow; wall-clock time counts the time other processes take on a
//! shared machine. The thread's own CPU time (`CLOCK_THREAD_CPUTIME_ID`, in nanoseconds)
//! leaves that out; the minimum of 3 runs ([`common::cpu::RUNS`]) leaves out most of the rest
//! (cache misses after a preemption). Sizes are chosen so that the small run takes
//! milliseconds in a release build, far above the clock's resolution.
//!
//! Meant for `cargo test --release`; in a debug build the sizes are 8 times smaller.

use crate::common;
use common::cpu::cost;
use lisp_read_file::grammar::Grammar;
use lisp_read_file::guard::{Guard, DEFAULT_MAX_FILE_BYTES};
use lisp_read_file::outline::outline_bytes;
use lisp_read_file::tool::read_file::{read_file, ReadFileRequest};
use lisp_read_file::tool::{read_envelope, read_loaded, ReadRequest};
use lisp_read_file::view::Comments;
use serde_json::{json, Map, Value};
use std::fs;
use std::path::PathBuf;

/// Linear work gives 4; quadratic 16. Generous: for noise, and for the caches and the
/// allocator (the outline of 200,000 `()` takes 90 MB: from 50,000 to 200,000 the ratio
/// was measured at up to 11.5, from 200,000 to 800,000 at 3.6; such a case is measured
/// again at larger sizes before it fails).
const MAX_RATIO: f64 = 10.0;
/// Size (bytes, roughly) of the smaller file of each case.
const N: usize = if cfg!(debug_assertions) {
    25_000
} else {
    100_000
};

/// An adversarial family: the file of about `size` bytes.
type Family = fn(usize) -> Vec<u8>;

fn repeat(unit: &str, size: usize) -> Vec<u8> {
    unit.repeat(size / unit.len()).into_bytes()
}

fn families() -> Vec<(&'static str, Family)> {
    vec![
        ("one form per short line", |n| repeat("(a)\n", n)),
        ("(a) on one line", |n| repeat("(a) ", n)),
        ("dense ()", |n| repeat("()", n)),
        ("deep nesting", |n| {
            let mut v = repeat("(", n / 2);
            v.extend(repeat(")", n / 2));
            v
        }),
        ("one long line", |n| {
            let mut v = b"(defun f () \"".to_vec();
            v.extend(repeat("x", n));
            v.extend(b"\")\n");
            v
        }),
        ("many strings", |n| repeat("\"s\" ", n)),
        ("many comments", |n| repeat("; c\n", n)),
        ("many block comments", |n| repeat("#| x |# ", n)),
        ("many #| unterminated", |n| repeat("#|", n)),
        ("definitions", |n| {
            repeat("(defun f (x) \"doc\" (g x))\n", n)
        }),
        ("many unclosed (", |n| repeat("(\n", n)),
        ("containers", |n| {
            repeat("(progn (defun f () 1) (defvar *v* 2))\n", n)
        }),
        // Each `)` is a diagnostic on the same line: its column once cost the line.
        ("many ) on one line", |n| repeat(")", n)),
        ("stray ) among forms on one line", |n| repeat("(a) ) ", n)),
        // Runaway strings and comments: each form is cut for a fresh reading at the next
        // line (up to the budget), or closes across a line in a string and is checked.
        ("runaway #| in every form", |n| repeat("(f #|\n", n)),
        ("runaway string in every form", |n| repeat("(f \"\n", n)),
        ("docstrings across column-0 lines", |n| {
            repeat("(a \"\n(b)\n\")\n", n)
        }),
        ("inside-out strings", |n| repeat("(a \"x)\n(b \"\n", n)),
        ("escaped newlines", |n| repeat("(f x\\\n", n)),
        // The generic rule reads the list after the name and the docstring after it.
        ("generic definers", |n| {
            repeat(
                "(define-thing f :around ((x t) y)\n  \"doc\"\n  (g x))\n",
                n,
            )
        }),
        ("unclosed lambda lists", |n| repeat("(defun f (x (y\n", n)),
    ]
}

/// How to run a view on a file's bytes.
type Run = Box<dyn Fn(&[u8])>;
/// A view of a file: a name and how to run it.
type View = (&'static str, Run);

fn collapsed(edit: fn(&mut ReadRequest)) -> Run {
    Box::new(move |bytes| {
        let file = Guard::unconfined(u64::MAX)
            .check_bytes("f.lisp", bytes.to_vec())
            .unwrap();
        let mut request = ReadRequest::new("f.lisp");
        request.limit = usize::MAX;
        edit(&mut request);
        // A pattern may be refused as too costly: that is bounded work too.
        let _ = read_loaded(file, &Grammar::builtin(), &request, Some(true));
    })
}

fn views(dir: &PathBuf) -> Vec<View> {
    let guard = Guard::confined(std::slice::from_ref(dir), DEFAULT_MAX_FILE_BYTES * 64).unwrap();
    let path = dir.join("f.lisp");
    let write = move |bytes: &[u8]| fs::write(&path, bytes).unwrap();
    let guard2 = guard.clone();
    let write2 = write.clone();
    vec![
        ("collapsed", collapsed(|_| {})),
        (
            "name_pattern",
            collapsed(|r| r.name_pattern = Some("a|f".into())),
        ),
        (
            "content_pattern",
            collapsed(|r| r.content_pattern = Some("a|x".into())),
        ),
        // Literal text as well as a regex, matched on every form.
        (
            "name_pattern as printed",
            collapsed(|r| r.name_pattern = Some("f :around (t)".into())),
        ),
        // A short page: every form after it is matched once for the window note.
        (
            "name_pattern past the window",
            collapsed(|r| {
                r.name_pattern = Some("f|a".into());
                r.limit = 10;
            }),
        ),
        (
            "comments headers",
            collapsed(|r| r.comments = Comments::Headers),
        ),
        (
            "comments preceding",
            collapsed(|r| r.comments = Comments::Preceding),
        ),
        ("comments all", collapsed(|r| r.comments = Comments::All)),
        (
            "raw with line numbers",
            collapsed(|r| {
                r.collapsed = false;
                r.line_numbers = true;
            }),
        ),
        (
            "text grep",
            Box::new(|bytes: &[u8]| {
                let file = Guard::unconfined(u64::MAX)
                    .check_bytes("f.txt", bytes.to_vec())
                    .unwrap();
                let mut request = ReadRequest::new("f.txt");
                request.limit = usize::MAX;
                request.content_pattern = Some("a|x|c".into());
                let _ = read_loaded(file, &Grammar::builtin(), &request, Some(false));
            }),
        ),
        (
            "outline --json",
            Box::new(|bytes: &[u8]| {
                let grammar = Grammar::builtin();
                let outline = outline_bytes(bytes, &grammar);
                serde_json::to_vec(&outline).unwrap();
            }),
        ),
        (
            "read_file",
            Box::new(move |bytes: &[u8]| {
                write(bytes);
                let request = ReadFileRequest {
                    path: "f.lisp".into(),
                    start_line: 1,
                    max_lines: 500,
                };
                read_file(&guard, &request, &Default::default()).unwrap();
            }),
        ),
        (
            "Read",
            Box::new(move |bytes: &[u8]| {
                write2(bytes);
                let arguments: Map<String, Value> =
                    serde_json::from_value(json!({"path": "f.lisp", "limit": 2000})).unwrap();
                read_envelope::read(&guard2, &arguments, &Default::default());
            }),
        ),
    ]
}

/// The costs of `run` on a small and a large file, and their ratio.
fn ratio(run: &dyn Fn(&[u8]), small: Vec<u8>, large: Vec<u8>) -> (u64, u64, f64) {
    run(&small); // warm up (allocator, lazy tables)
    let (a, b) = (cost(&|| run(&small)), cost(&|| run(&large)));
    (a, b, b as f64 / a as f64)
}

/// Every view over every family at n and 4n; the cases whose ratio is too high.
fn superlinear(families: &[(&'static str, Family)]) -> Vec<String> {
    let dir = std::env::temp_dir().join(format!("lrf-complexity-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let dir = fs::canonicalize(&dir).unwrap();
    let mut failures = Vec::new();
    for (view, run) in views(&dir) {
        for (family, make) in families {
            // A ratio over the bound is measured again at twice and four times the sizes:
            // quadratic work stays at 16, a step of the caches or the allocator does not.
            let mut line = String::new();
            for size in [N, 2 * N, 4 * N] {
                let (a, b, ratio) = ratio(&*run, make(size), make(4 * size));
                line = format!(
                    "{view} / {family}: {:.2} ms -> {:.2} ms, ratio {ratio:.1}",
                    a as f64 / 1e6,
                    b as f64 / 1e6
                );
                eprintln!("{line}");
                // Below a millisecond the clock and the machine's noise dominate.
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
    failures
}

#[test]
fn every_view_is_linear_on_adversarial_files() {
    let failures = superlinear(&families());
    assert!(failures.is_empty(), "superlinear:\n{}", failures.join("\n"));
}

#[test]
fn the_measure_tells_linear_from_quadratic() {
    // The test above can fail: a quadratic loop over the same sizes is caught.
    let quadratic = |n: usize| {
        let v = vec![1u8; n / 16];
        let mut sum = 0u64;
        for i in 0..v.len() {
            sum = sum.wrapping_add(v[i..].iter().map(|&b| b as u64).sum::<u64>());
        }
        std::hint::black_box(sum);
    };
    let a = cost(&|| quadratic(N));
    let b = cost(&|| quadratic(4 * N));
    assert!(b as f64 / a as f64 > MAX_RATIO, "{a} -> {b}");
}
