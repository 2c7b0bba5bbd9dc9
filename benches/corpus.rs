//! BENCHMARKS.md throughput over a real corpus, every contender in the same run:
//!
//! * ours: scan + outline of every file, the library call the CLI's `outline` command makes
//!   (`lisp_read_file::outline::outline_bytes`); scan alone is shown too, for diagnosis;
//! * `tree-sitter-commonlisp` parsing the same bytes (a full concrete syntax tree);
//! * a plain byte loop counting `(` bytes: the practical ceiling of any one-pass reader.
//!
//! Each run times every contender once over the whole corpus, in turn; the table gives the
//! median of the runs and the ratios are medians of the per-run ratios (so a noisy
//! neighbour slows both sides of a ratio alike).
//!
//! ```sh
//! cargo bench --bench corpus                    # /usr/share/sbcl-source, 5 runs
//! cargo bench --bench corpus -- --runs 9 --corpus DIR
//! cargo bench --bench corpus -- --only ours --runs 50   # one contender, for a profiler
//! ```

#![allow(unreachable_pub)] // Helpers are `pub` for this program's own modules.

mod common;

use common::{corpus_or_explain, mb_per_s, median, time, Options};
use lisp_read_file::grammar::Grammar;
use lisp_read_file::outline::{outline_bytes, OutlineItem};
use lisp_read_file::scan::scan;
use std::hint::black_box;

/// The practical ceiling: one pass counting `(` bytes. `black_box` on every slice keeps
/// the compiler from knowing the bytes (it may still vectorise the loop, as it should).
fn byte_loop(files: &[&[u8]]) -> usize {
    let mut count = 0usize;
    for &bytes in files {
        let bytes: &[u8] = black_box(bytes);
        count += bytes.iter().filter(|&&b| b == b'(').count();
    }
    black_box(count)
}

fn ours(files: &[&[u8]], grammar: &Grammar) -> usize {
    let mut items = 0;
    for &bytes in files {
        let outline = outline_bytes(black_box(bytes), grammar);
        items += black_box(&outline).items.len();
    }
    items
}

/// Scan + outline, then the text of every form and child (signature, docstring,
/// conditionals): what printing the whole outline (`outline --json`) costs on top.
fn ours_with_text(files: &[&[u8]], grammar: &Grammar) -> usize {
    let mut chars = 0;
    for &bytes in files {
        let outline = outline_bytes(black_box(bytes), grammar);
        let mut stack: Vec<&OutlineItem> = outline.items.iter().collect();
        while let Some(item) = stack.pop() {
            if let Some(form) = &item.form {
                chars += form.signature().len() + form.doc().map_or(0, str::len);
                chars += form.conditionals().len();
                stack.extend(form.children.iter());
            }
        }
    }
    black_box(chars)
}

fn scan_only(files: &[&[u8]]) -> usize {
    let mut items = 0;
    for &bytes in files {
        items += black_box(scan(black_box(bytes))).items.len();
    }
    items
}

fn tree_sitter(files: &[&[u8]], parser: &mut tree_sitter::Parser) -> usize {
    let mut nodes = 0;
    for &bytes in files {
        let tree = parser
            .parse(black_box(bytes), None)
            .expect("tree-sitter parse");
        nodes += black_box(&tree).root_node().named_child_count();
    }
    nodes
}

fn main() {
    let options = Options::from_args(5);
    let Some(corpus) = corpus_or_explain(&options) else {
        return;
    };
    let files: Vec<&[u8]> = corpus.iter().map(|(_, b)| b.as_slice()).collect();
    let total: usize = files.iter().map(|b| b.len()).sum();
    let grammar = Grammar::builtin();
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_commonlisp::LANGUAGE_COMMONLISP.into())
        .expect("tree-sitter-commonlisp language");

    println!(
        "corpus: {} .lisp files under {}, {} bytes ({:.1} MB); {} runs, one core",
        files.len(),
        options.corpus.display(),
        total,
        total as f64 / 1e6,
        options.runs
    );
    if let Some(only) = &options.only {
        // One contender alone, for `perf record` and friends.
        let run: Box<dyn Fn() -> usize> = match only.as_str() {
            "ours" => Box::new(|| ours(&files, &grammar)),
            "scan" => Box::new(|| scan_only(&files)),
            "text" => Box::new(|| ours_with_text(&files, &grammar)),
            "bytes" => Box::new(|| byte_loop(&files)),
            other => panic!("--only {other}: expected ours, scan, text or bytes"),
        };
        let seconds: Vec<f64> = (0..options.runs)
            .map(|_| time(&run).as_secs_f64())
            .collect();
        println!("{only}: median {:.2} ms", median(&seconds) * 1e3);
        return;
    }
    // Warm-up: caches, page faults, allocator.
    black_box((ours(&files, &grammar), scan_only(&files), byte_loop(&files)));
    if !options.quick {
        black_box(tree_sitter(&files, &mut parser));
    }

    let names = [
        "scan + outline (ours)",
        "scan only (ours)",
        "tree-sitter-commonlisp",
        "byte loop counting '('",
        "ours + every form's text",
    ];
    let mut seconds: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    for _ in 0..options.runs {
        seconds[0].push(time(|| ours(&files, &grammar)).as_secs_f64());
        seconds[1].push(time(|| scan_only(&files)).as_secs_f64());
        if !options.quick {
            seconds[2].push(time(|| tree_sitter(&files, &mut parser)).as_secs_f64());
        }
        seconds[3].push(time(|| byte_loop(&files)).as_secs_f64());
        seconds[4].push(time(|| ours_with_text(&files, &grammar)).as_secs_f64());
    }

    println!();
    println!(
        "{:<24} {:>12} {:>12} {:>22}",
        "", "median ms", "MB/s", "min .. max ms"
    );
    for (name, s) in names.iter().zip(&seconds) {
        if s.is_empty() {
            continue;
        }
        let min = s.iter().copied().fold(f64::INFINITY, f64::min);
        let max = s.iter().copied().fold(0.0, f64::max);
        println!(
            "{:<24} {:>12.2} {:>12.1} {:>22}",
            name,
            median(s) * 1e3,
            mb_per_s(total, median(s)),
            format!("{:.2} .. {:.2}", min * 1e3, max * 1e3)
        );
    }

    let per_run = |a: usize, b: usize| -> f64 {
        let r: Vec<f64> = seconds[a]
            .iter()
            .zip(&seconds[b])
            .map(|(x, y)| x / y)
            .collect();
        median(&r)
    };
    println!();
    println!("ratios (median of per-run ratios), BENCHMARKS.md targets:");
    if !options.quick {
        let speedup = per_run(2, 0);
        println!(
            "  ours vs tree-sitter: {:>8.1}x faster   (target >= 100x)  {}",
            speedup,
            verdict(speedup >= 100.0)
        );
    }
    let behind = per_run(0, 3);
    println!(
        "  ours vs byte loop:   {:>8.2}x slower   (target <= 3x)    {}",
        behind,
        verdict(behind <= 3.0)
    );
    println!("  scan only vs byte loop: {:>5.2}x slower", per_run(1, 3));
    println!(
        "  ours + every form's text vs byte loop: {:>5.2}x slower",
        per_run(4, 3)
    );
}

fn verdict(pass: bool) -> &'static str {
    if pass {
        "PASS"
    } else {
        "FAIL"
    }
}
