//! BENCHMARKS.md: the project map of SBCL's `src/compiler` (docs/project.md), the library
//! call (`tool::read` on the directory) and the release binary end to end.
//!
//! Each case is timed `--runs` times (default 21); the table gives the median and the
//! minimum. The target: the map of `src/compiler` in under 100 ms.
//!
//! ```sh
//! cargo bench --bench project                  # /usr/share/sbcl-source/src/compiler
//! cargo bench --bench project -- --runs 51 --corpus /usr/share/sbcl-source
//! ```

#![allow(unreachable_pub)] // Helpers are `pub` for this program's own modules.

#[allow(dead_code)] // The corpus loading is for the other benchmarks.
mod common;

use common::{median, time, Options};
use lisp_read_file::grammar::Grammar;
use lisp_read_file::guard::{Guard, DEFAULT_MAX_FILE_BYTES};
use lisp_read_file::tool::{self, ReadRequest};
use std::path::Path;
use std::process::Command;

fn main() {
    let options = Options::from_args(21);
    let dir = options.corpus.join("src/compiler");
    if !dir.is_dir() {
        eprintln!(
            "{} is missing: apt-get install sbcl-source (or pass --corpus DIR)",
            dir.display()
        );
        return;
    }
    let guard = Guard::confined(std::slice::from_ref(&dir), DEFAULT_MAX_FILE_BYTES).unwrap();
    let grammar = Grammar::builtin();
    type Edit = fn(&mut ReadRequest);
    let cases: [(&str, Edit); 4] = [
        ("map, default budget (steps to counts)", |_| {}),
        ("map, whole outline (limit 100000)", |r| r.limit = 100_000),
        ("map, kinds defmacro", |r| {
            r.kinds = Some(vec!["defmacro".into()])
        }),
        ("map, name_pattern across files", |r| {
            r.name_pattern = Some("^ir1-convert".into())
        }),
    ];
    println!("project map of {} ({} runs)", dir.display(), options.runs);
    println!(
        "{:<44} {:>10} {:>10} {:>8} {:>6}",
        "case", "median ms", "min ms", "lines", "step"
    );
    for (name, edit) in cases {
        let mut request = ReadRequest::new(".");
        edit(&mut request);
        let mut times = Vec::new();
        let mut last = None;
        for _ in 0..options.runs {
            let mut result = None;
            times
                .push(time(|| result = Some(tool::read(&guard, &grammar, &request))).as_secs_f64());
            last = result;
        }
        let result = last.unwrap().unwrap();
        print_row(
            name,
            &times,
            result.content.lines().count(),
            result.step.map_or("", |s| s.as_str()),
        );
    }
    cli(&dir, options.runs);
}

fn print_row(name: &str, times: &[f64], lines: usize, step: &str) {
    let min = times.iter().copied().fold(f64::INFINITY, f64::min);
    println!(
        "{name:<44} {:>10.1} {:>10.1} {lines:>8} {step:>6}",
        median(times) * 1e3,
        min * 1e3
    );
}

/// The release binary, end to end (process start included), when it is built.
fn cli(dir: &Path, runs: usize) {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/lisp-read-file");
    if !bin.exists() {
        println!(
            "(no {}: cargo build --release to time the CLI)",
            bin.display()
        );
        return;
    }
    let mut times = Vec::new();
    let mut lines = 0;
    for _ in 0..runs {
        let mut output = None;
        times.push(
            time(|| {
                output = Command::new(&bin)
                    .arg("--root")
                    .arg(dir)
                    .arg(".")
                    .output()
                    .ok()
            })
            .as_secs_f64(),
        );
        lines = output.map_or(0, |o| o.stdout.split(|&b| b == b'\n').count() - 1);
    }
    print_row("CLI `lisp-read-file --root DIR .`", &times, lines, "");
}
