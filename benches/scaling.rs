//! How cost grows with file size and with nesting depth (docs/reader.md: linear time, no
//! recursion on depth). Two tables:
//!
//! * size: real SBCL source text, the corpus files concatenated (repeated as needed) and
//!   cut before a line that starts with `(`, from 1 KB to 50 MB;
//! * depth: a 4 MB file of forms `(defun fN (x) (a (a ... x)))` nested `depth` deep, and
//!   of containers `(progn (progn ... (defun f ())))`, from depth 10 to 10^6.
//!
//! Each cell is the median of several runs of the library pipeline the CLI runs: scan +
//! outline (`outline` command), and scan + outline + collapsed view (the default view).
//!
//! ```sh
//! cargo bench --bench scaling
//! cargo bench --bench scaling -- --runs 7 --corpus DIR
//! ```

#![allow(unreachable_pub)] // Helpers are `pub` for this program's own modules.

mod common;

use common::{corpus_or_explain, mb_per_s, median, time, Options};
use lisp_read_file::grammar::Grammar;
use lisp_read_file::outline::outline_bytes;
use lisp_read_file::source::Source;
use lisp_read_file::view::{render, ViewOptions};
use std::hint::black_box;

fn outline_only(bytes: &[u8], grammar: &Grammar) -> usize {
    outline_bytes(black_box(bytes), grammar).items.len()
}

fn collapsed_view(bytes: &[u8], grammar: &Grammar) -> usize {
    let bytes = black_box(bytes);
    let source = Source::new(bytes);
    let outline = outline_bytes(bytes, grammar);
    render(&source, Some(&outline), &ViewOptions::default())
        .content
        .len()
}

/// Median seconds of `runs` runs of `f` (after one warm-up run); fewer runs for big inputs.
fn measure(runs: usize, bytes: usize, f: impl Fn() -> usize) -> f64 {
    black_box(f());
    let runs = if bytes >= 10_000_000 {
        runs.min(3)
    } else {
        runs
    };
    // Small inputs: repeat inside one timing so that the clock's resolution does not matter.
    let reps = (1_000_000 / bytes.max(1)).clamp(1, 1000);
    let s: Vec<f64> = (0..runs)
        .map(|_| {
            time(|| {
                for _ in 0..reps {
                    black_box(f());
                }
            })
            .as_secs_f64()
                / reps as f64
        })
        .collect();
    median(&s)
}

fn row(label: &str, bytes: usize, outline_s: f64, view_s: f64) {
    println!(
        "{:>12} {:>12} {:>12.3} {:>10.1} {:>12.3} {:>10.1}",
        label,
        bytes,
        outline_s * 1e3,
        mb_per_s(bytes, outline_s),
        view_s * 1e3,
        mb_per_s(bytes, view_s),
    );
}

fn header(first: &str) {
    println!(
        "{:>12} {:>12} {:>12} {:>10} {:>12} {:>10}",
        first, "bytes", "outline ms", "MB/s", "view ms", "MB/s"
    );
}

/// The corpus text, repeated, cut before the last column-0 `(` at or before `size`.
fn corpus_prefix(text: &[u8], size: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(size + 1);
    while out.len() < size {
        let take = (size - out.len()).min(text.len());
        out.extend_from_slice(&text[..take]);
    }
    let cut = memchr::memmem::rfind(&out[..size], b"\n(").map_or(size, |k| k + 1);
    out.truncate(cut);
    out
}

/// Makes about `total` bytes of forms nested `depth` deep.
type Generator = fn(usize, usize) -> Vec<u8>;

/// About `total` bytes of forms nested `depth` deep (one form if one is bigger).
fn nested_defuns(depth: usize, total: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(total + 4 * depth + 64);
    let mut n = 0;
    while out.len() < total {
        out.extend_from_slice(format!("(defun f{n} (x)\n  ").as_bytes());
        out.extend(std::iter::repeat_n(b"(a ".as_slice(), depth - 1).flatten());
        out.push(b'x');
        out.extend(std::iter::repeat_n(b')', depth));
        out.push(b'\n');
        n += 1;
    }
    out
}

/// About `total` bytes of `(progn (progn ... (defun f ())))` nested `depth` deep.
fn nested_containers(depth: usize, total: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(total + 8 * depth + 64);
    while out.len() < total {
        out.extend(std::iter::repeat_n(b"(progn ".as_slice(), depth - 1).flatten());
        out.extend_from_slice(b"(defun f ())");
        out.extend(std::iter::repeat_n(b')', depth - 1));
        out.push(b'\n');
    }
    out
}

fn main() {
    let options = Options::from_args(5);
    let Some(corpus) = corpus_or_explain(&options) else {
        return;
    };
    let grammar = Grammar::builtin();
    let text: Vec<u8> = corpus
        .iter()
        .flat_map(|(_, b)| b.iter().copied().chain([b'\n']))
        .collect();

    println!(
        "size: SBCL source text cut to size; median of {} runs (3 at 10 MB and up)",
        options.runs
    );
    header("size");
    let sizes: &[(&str, usize)] = if options.quick {
        &[("1 KB", 1_000), ("100 KB", 100_000), ("1 MB", 1_000_000)]
    } else {
        &[
            ("1 KB", 1_000),
            ("10 KB", 10_000),
            ("100 KB", 100_000),
            ("1 MB", 1_000_000),
            ("10 MB", 10_000_000),
            ("50 MB", 50_000_000),
        ]
    };
    for &(label, size) in sizes {
        let bytes = corpus_prefix(&text, size);
        let o = measure(options.runs, bytes.len(), || outline_only(&bytes, &grammar));
        let v = measure(options.runs, bytes.len(), || {
            collapsed_view(&bytes, &grammar)
        });
        row(label, bytes.len(), o, v);
    }

    let total = 4_000_000;
    let depths: &[usize] = if options.quick {
        &[10, 1_000, 100_000]
    } else {
        &[10, 100, 1_000, 10_000, 100_000, 1_000_000]
    };
    let shapes: [(&str, Generator); 2] = [
        ("(defun fN (x) (a (a ... x)))", nested_defuns),
        ("(progn (progn ... (defun f ())))", nested_containers),
    ];
    for (shape, make) in shapes {
        println!();
        println!("depth: ~4 MB of {shape} nested DEPTH deep");
        header("depth");
        for &depth in depths {
            let bytes = make(depth, total);
            let o = measure(options.runs, bytes.len(), || outline_only(&bytes, &grammar));
            let v = measure(options.runs, bytes.len(), || {
                collapsed_view(&bytes, &grammar)
            });
            row(&depth.to_string(), bytes.len(), o, v);
        }
    }
}
