//! Directory walks do work linear in the tree and bounded by the walk's caps, in the depth
//! of the tree and in the size of its ignore files: a map and a `find` over a tree of size
//! n and of size 4n, the CPU time of the calling thread compared (the method of
//! tests/reader/complexity.rs: the least of 3 runs of `CLOCK_THREAD_CPUTIME_ID`, never wall-clock
//! time). Each tree holds one Lisp file, so the walk, the reading and the search all run
//! on the calling thread. Linear work gives a ratio near 4, quadratic near 16; the test
//! fails above 10 (measured again at larger sizes first, as tests/reader/complexity.rs does).
//!
//! Past the walk's caps (directories deeper than `MAX_WALK_DEPTH`, ignore patterns past
//! `MAX_IGNORE_PATTERNS`) the work stops growing: a 1,500-deep chain once took 10 s to
//! map against 0.4 s at 375 deep, and 34,000 globs in four `.gitignore` files 5 s and
//! 1.16 GB.

use crate::common;

use common::cpu::cost;
use lisp_read_file::cancel::CancelToken;
use lisp_read_file::find::{find, FindRequest};
use lisp_read_file::grammar::Grammar;
use lisp_read_file::guard::{Guard, MAX_IGNORE_PATTERNS, MAX_WALK_DEPTH};
use lisp_read_file::tool::{self, ReadRequest};
use std::fs;
use std::path::{Path, PathBuf};

const MAX_RATIO: f64 = 10.0;
/// Each measurement repeats the work so that the small tree takes milliseconds.
const REPEAT: usize = 8;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lrf-walk-cx-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    fs::canonicalize(&dir).unwrap()
}

/// A tree of size `n` made under an empty directory.
type Family = fn(&Path, usize);

/// What a family's `n` counts.
#[derive(Clone, Copy)]
enum Size {
    /// Directories deep.
    Depth,
    /// Ignore patterns, all ignore files together.
    Patterns,
}

/// A chain of `n` directories, one file at its bottom.
fn chain(root: &Path, n: usize) -> PathBuf {
    let mut deep = root.to_path_buf();
    for _ in 0..n {
        deep.push("d");
    }
    fs::create_dir_all(&deep).unwrap();
    fs::write(deep.join("x.lisp"), "(defun x ())").unwrap();
    deep
}

/// `n` glob patterns, none matching the tree's names.
fn globs(n: usize) -> String {
    (0..n).map(|i| format!("*.gen{i}[0-9]\n")).collect()
}

fn families() -> Vec<(&'static str, Size, Family)> {
    use Size::{Depth, Patterns};
    vec![
        ("a chain of n directories", Depth, |root, n| {
            chain(root, n);
        }),
        (
            "a chain of n directories, a file at each level",
            Depth,
            |root, n| {
                let mut dir = root.to_path_buf();
                for i in 0..n {
                    dir.push("d");
                    fs::create_dir_all(&dir).unwrap();
                    fs::write(dir.join(format!("f{i}.txt")), "").unwrap();
                }
                fs::write(dir.join("x.lisp"), "(defun x ())").unwrap();
            },
        ),
        (
            "a chain of n directories under a .gitignore",
            Depth,
            |root, n| {
                fs::write(root.join(".gitignore"), "*.fasl\nbuild/\n!keep.fasl\n").unwrap();
                chain(root, n);
            },
        ),
        (
            "a chain of n directories, a .gitignore at each level",
            Depth,
            |root, n| {
                let mut dir = root.to_path_buf();
                for _ in 0..n {
                    dir.push("d");
                    fs::create_dir_all(&dir).unwrap();
                    fs::write(dir.join(".gitignore"), "*.fasl\n").unwrap();
                }
                fs::write(dir.join("x.lisp"), "(defun x ())").unwrap();
            },
        ),
        (
            "a .gitignore of n/4 globs in each of 4 directories",
            Patterns,
            |root, n| {
                let text = globs(n / 4);
                for d in ["a", "b", "c", "d"] {
                    fs::create_dir_all(root.join(d)).unwrap();
                    fs::write(root.join(d).join(".gitignore"), &text).unwrap();
                    fs::write(root.join(d).join("y.txt"), "").unwrap();
                }
                fs::write(root.join("d/x.lisp"), "(defun x ())").unwrap();
            },
        ),
        (
            "one .gitignore of n/50 globs linked into 50 directories",
            Patterns,
            |root, n| {
                fs::write(root.join("rules"), globs(n / 50)).unwrap();
                for i in 0..50 {
                    let d = root.join(format!("d{i:02}"));
                    fs::create_dir_all(&d).unwrap();
                    fs::hard_link(root.join("rules"), d.join(".gitignore")).unwrap();
                    fs::write(d.join("y.txt"), "").unwrap();
                }
                fs::write(root.join("d49/x.lisp"), "(defun x ())").unwrap();
            },
        ),
    ]
}

/// What is measured over a tree: a map of it, a `find` in it.
type Run = fn(&Guard, &Grammar);

fn runs() -> Vec<(&'static str, Run)> {
    vec![
        ("map", |guard, grammar| {
            let result = tool::read(guard, grammar, &ReadRequest::new(".")).unwrap();
            std::hint::black_box(result);
        }),
        ("find", |guard, grammar| {
            let mut request = FindRequest::new(".");
            request.name_pattern = Some("^x$".into());
            let result = find(guard, grammar, &request, &CancelToken::new()).unwrap();
            std::hint::black_box(result);
        }),
    ]
}

/// The CPU time of `run` over the tree `family` makes at size `n`.
fn measure(family: Family, run: Run, n: usize) -> u64 {
    let dir = scratch(&format!("{n}"));
    let root = dir.join("root");
    fs::create_dir_all(&root).unwrap();
    family(&root, n);
    let guard = Guard::confined(std::slice::from_ref(&root), 1 << 20).unwrap();
    let grammar = Grammar::builtin();
    run(&guard, &grammar); // warm up
    let spent = cost(&|| {
        for _ in 0..REPEAT {
            run(&guard, &grammar);
        }
    });
    let _ = fs::remove_dir_all(&dir);
    spent
}

/// Every run over every family at n and 4n, at the sizes given for what its n counts
/// (tried in order until one passes); the cases whose ratio is too high.
fn superlinear(depths: &[usize], patterns: &[usize]) -> Vec<String> {
    let mut failures = Vec::new();
    for (what, run) in runs() {
        for (family, size, make) in families() {
            let sizes = match size {
                Size::Depth => depths,
                Size::Patterns => patterns,
            };
            let mut line = String::new();
            for &n in sizes {
                let (a, b) = (measure(make, run, n), measure(make, run, 4 * n));
                let ratio = b as f64 / a as f64;
                line = format!(
                    "{what} / {family}: n = {n}: {:.2} ms -> {:.2} ms, ratio {ratio:.1}",
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
    failures
}

/// Below the caps: 4n up to `MAX_WALK_DEPTH` levels and `MAX_IGNORE_PATTERNS` patterns.
#[test]
fn walks_are_linear_in_depth_and_ignore_files_below_the_caps() {
    let (depth, patterns) = (MAX_WALK_DEPTH / 4, MAX_IGNORE_PATTERNS / 4);
    let failures = superlinear(&[depth / 2, depth], &[patterns / 2, patterns]);
    assert!(failures.is_empty(), "superlinear:\n{}", failures.join("\n"));
}

/// Past the caps: chains from 375 to 1,500 deep, and from 34,000 to 136,000 patterns
/// (the report's four `.gitignore` files of 34,000 globs).
#[test]
fn walks_stop_growing_past_the_caps() {
    let failures = superlinear(&[375], &[34_000]);
    assert!(failures.is_empty(), "superlinear:\n{}", failures.join("\n"));
}
