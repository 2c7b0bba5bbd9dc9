//! The memory promise through the real binary: peak resident memory below 4 times the
//! file's size plus 8 MB, on dense files (a form every two or three bytes, a comment on
//! every line), for every view.
//!
//! The peak is the child's own maximum resident set size as reported by `wait4`, so
//! tests running at the same time do not see each other's children.

use crate::common;
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const MIB: usize = 1 << 20;

/// Each view, as the arguments that select it (the path comes last).
const VIEWS: [&[&str]; 9] = [
    &[],
    &["--json"],
    &["-n", "foo"],
    &["-c", "foo"],
    &["--comments", "all"],
    &["--comments", "preceding"],
    &["--raw"],
    &["outline"],
    &["outline", "--json"],
];

/// `unit` repeated to exactly `size` bytes, in a file of its own. Written in pieces: the
/// test process stays small (see [`peak_bytes`]).
fn dense_file(dir: &Path, name: &str, unit: &[u8], size: usize) -> PathBuf {
    let path = dir.join(name);
    let mut out = BufWriter::new(fs::File::create(&path).unwrap());
    let mut left = size;
    while left > 0 {
        let n = left.min(unit.len());
        out.write_all(&unit[..n]).unwrap();
        left -= n;
    }
    out.flush().unwrap();
    path
}

/// Puts `before` in front of the file and `after` at its end.
fn wrap(path: &Path, before: &[u8], after: &[u8]) {
    let body = fs::read(path).unwrap();
    fs::write(path, [before, &body, after].concat()).unwrap();
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lrf-mem-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the binary with `args` and returns its peak resident memory in bytes.
///
/// Linux counts in a child's peak the peak of the process that started it (the memory
/// map it had before `exec`), so this is an upper bound: never below the peak of this
/// test process, which [`floor`] measures.
fn peak_bytes(args: &[&str]) -> usize {
    // Reaped by wait4 below, which also gives its resource usage.
    #[allow(clippy::zombie_processes)]
    let child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (code, peak) = common::peak::wait_with_peak(child);
    assert_eq!(code, 0, "{args:?} exited with status {code}");
    peak
}

/// Asserts the promise for every view of `path`; `extra`: arguments given to each run.
fn check_every_view(path: &Path, extra: &[&str], slack: usize) {
    let size = fs::metadata(path).unwrap().len() as usize;
    let limit = 4 * size + 8 * MIB + slack;
    let path = path.to_str().unwrap();
    let mut failures = Vec::new();
    for view in VIEWS {
        let (sub, flags) = match view.first() {
            Some(&"outline") => (&view[..1], &view[1..]),
            _ => (&view[..0], view),
        };
        let args: Vec<&str> = [sub, extra, flags, &[path]].concat();
        let peak = peak_bytes(&args);
        if peak >= limit {
            failures.push(format!("{args:?}: {} KB", peak / 1024));
        }
    }
    assert!(
        failures.is_empty(),
        "peak memory over {} KB (4 x {size} bytes + 8 MB): {failures:#?}",
        limit / 1024
    );
}

/// The release binary's peak for `--version` is about 4 MB; at most this.
const RELEASE_FLOOR: usize = 5 * MIB;

/// The peak of a run that does nearly nothing: what every measure includes.
fn floor() -> usize {
    peak_bytes(&["--version"])
}

/// One test, not several: tests run on threads of one process, and a test making a large
/// file would raise the peak every child is measured with.
#[test]
fn dense_files_stay_under_the_promise_in_every_view() {
    let dir = scratch("dense");
    let floor = floor();
    // The promise is the shipped (release) binary's: its start-up peak is about 4 MB. A
    // debug build's unoptimized image adds the same to every measure; only that is
    // forgiven, and only in a debug build.
    let slack = if cfg!(debug_assertions) {
        floor.saturating_sub(RELEASE_FLOOR)
    } else {
        0
    };
    assert!(
        floor < 8 * MIB + slack,
        "the test process peaks at {} KB: too high to measure children against 8 MB",
        floor / 1024
    );
    let max = ["--max-file-bytes", "20000000"];
    for (name, unit) in [
        ("parens.lisp", &b"()"[..]),
        ("lists.lisp", b"(a)\n"),
        ("quotes.lisp", b"'a "),
        ("comments.lisp", b";\n"),
        // Every line an unclosed list: the recovery table holds every `(`.
        ("unclosed.lisp", b"(\n"),
        // Every byte a stray `)`: a diagnostic each, past the first 1,000 only counted.
        ("strays.lisp", b")"),
    ] {
        check_every_view(&dense_file(&dir, name, unit, MIB), &max, slack);
    }
    // One entry of half a million lines, shown cut at the limit: a form matched by
    // content, the comment block above a form.
    let big_form = dense_file(&dir, "big-form.lisp", b"a\n", MIB - 4);
    wrap(&big_form, b"(f\n", b")\n");
    let big_block = dense_file(&dir, "big-block.lisp", b";\n", MIB - 4);
    wrap(&big_block, b"", b"(a)\n");
    for (path, view) in [(&big_form, "-c"), (&big_block, "--comments")] {
        let size = fs::metadata(path).unwrap().len() as usize;
        let arg = if view == "-c" { "a" } else { "preceding" };
        let peak = peak_bytes(&[max[0], max[1], view, arg, path.to_str().unwrap()]);
        assert!(
            peak < 4 * size + 8 * MIB + slack,
            "{view} {arg} {path:?}: {} KB",
            peak / 1024
        );
    }
    // One container of 350,000 child forms: only the first outline::MAX_CHILDREN are
    // listed (each child costs a few hundred bytes).
    let container = dense_file(&dir, "container.lisp", b"() ", MIB - 16);
    wrap(&container, b"(progn ", b")\n");
    check_every_view(&container, &max, slack);
    // One form behind a quarter of a million reader conditionals.
    let conditionals = dense_file(&dir, "conditionals.lisp", b"#+a ", MIB - 4);
    wrap(&conditionals, b"", b"a\n");
    check_every_view(&conditionals, &max, slack);
    // A larger file of real definitions, past the default size limit.
    let demo = fs::read(Path::new(ROOT).join("fixtures/demo/demo.lisp")).unwrap();
    check_every_view(&dense_file(&dir, "demo.lisp", &demo, 12 * MIB), &max, slack);
    let _ = fs::remove_dir_all(&dir);
}
