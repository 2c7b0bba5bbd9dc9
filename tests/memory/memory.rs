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
    // stderr to a file: a pattern that matches nothing exits 1 with nothing there (as
    // grep's does); an error exits 1 and writes its code.
    static RUN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let err_path = std::env::temp_dir().join(format!("lrf-mem-stderr-{}-{n}", std::process::id()));
    let err_file = std::fs::File::create(&err_path).unwrap();
    let child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err_file)
        .spawn()
        .unwrap();
    let (code, peak) = common::peak::wait_with_peak(child);
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let _ = std::fs::remove_file(&err_path);
    assert!(
        code == 0 || (code == 1 && stderr.is_empty()),
        "{args:?} exited with status {code}: {stderr}"
    );
    peak
}

/// Asserts the promise for every view of `path`; `extra`: arguments given to each run.
///
/// The 8 MB of the promise hold the program itself. Its code is a mapping of the
/// binary's file, and how much of it the kernel counts as resident depends on the page
/// cache, not on the program: the same binary's `-n foo` on a 1 MiB file peaked at 12.0 MB
/// in one hour and 13.7 MB in the next, with 4.7 MB of heap both times (massif), once
/// the page cache held the file in large folios (`FileHugePages` in /proc/meminfo). So
/// what the same view peaks at over an empty file, past [`RELEASE_FLOOR`], is counted as
/// the program's, not as the file's.
fn check_every_view(path: &Path, extra: &[&str], slack: usize) {
    let size = fs::metadata(path).unwrap().len() as usize;
    let limit = 4 * size + 8 * MIB + slack;
    let empty = path.with_file_name("empty.lisp");
    fs::write(&empty, b"").unwrap();
    let (path, empty) = (path.to_str().unwrap(), empty.to_str().unwrap());
    let mut failures = Vec::new();
    for view in VIEWS {
        let (sub, flags) = match view.first() {
            Some(&"outline") => (&view[..1], &view[1..]),
            _ => (&view[..0], view),
        };
        let args: Vec<&str> = [sub, extra, flags, &[path]].concat();
        let code = peak_bytes(&[sub, extra, flags, &[empty]].concat());
        let peak = peak_bytes(&args);
        if peak.saturating_sub(code.saturating_sub(RELEASE_FLOOR)) >= limit {
            failures.push(format!(
                "{args:?}: {} KB ({} KB over an empty file)",
                peak / 1024,
                code / 1024
            ));
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
    check_map_views(&dir, slack);
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
    documents_stay_under_the_promise(slack);
}

/// Each view of a project map, as the arguments that select it (the directory comes last).
const MAP_VIEWS: [&[&str]; 8] = [
    &[],
    &["--json"],
    &["--detail", "no-docstrings"],
    &["--detail", "names"],
    &["--detail", "counts"],
    &["--kinds", "defun"],
    &["-n", "foo"],
    &["--limit", "100000"],
];

/// The map of a directory of dense files holds the promise for each file it reads at
/// once: below (files read at once) x (4 x the largest file + 8 MB). It once kept each
/// file's whole outline and rendered every step whole, even those that could not fit:
/// 368 MB for two files of 1 MiB (an unclosed list a line; `(a)` lines), 749 MB for one
/// of `)`.
fn check_map_views(dir: &Path, slack: usize) {
    let maps = dir.join("map");
    fs::create_dir_all(&maps).unwrap();
    let files = [
        ("unclosed.lisp", &b"(\n"[..]),
        ("lists.lisp", b"(a)\n"),
        ("parens.lisp", b"()"),
        ("strays.lisp", b")"),
        ("comments.lisp", b";\n"),
    ];
    for (name, unit) in files {
        dense_file(&maps, name, unit, MIB);
    }
    let at_once = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8)
        .min(files.len());
    let limit = at_once * (4 * MIB + 8 * MIB) + slack;
    let path = maps.to_str().unwrap();
    let mut failures = Vec::new();
    for view in MAP_VIEWS {
        let args: Vec<&str> = [&["--max-file-bytes", "20000000"], view, &[path]].concat();
        let peak = peak_bytes(&args);
        if peak >= limit {
            failures.push(format!("{args:?}: {} KB", peak / 1024));
        }
    }
    assert!(
        failures.is_empty(),
        "map peak over {} KB ({at_once} files at once): {failures:#?}",
        limit / 1024
    );
}

/// Runs the binary with `args`: its exit code and peak resident memory in bytes.
fn peak_and_code(args: &[&str]) -> (i32, usize) {
    #[allow(clippy::zombie_processes)]
    let child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    common::peak::wait_with_peak(child)
}

/// Writes one object of a PDF, in pieces.
type WriteObject = dyn Fn(&mut dyn Write);

/// Writes a PDF of one page whose objects are `objects` (written by each closure, in
/// pieces), with a cross-reference table when `xref`. Object 1 is the catalog, 2 the
/// page tree, 3 the page (its content is object 4); the closures write objects 4, 5...
fn pdf_file(dir: &Path, name: &str, objects: &[&WriteObject], xref: bool) -> PathBuf {
    let path = dir.join(name);
    let mut out = Counting {
        inner: BufWriter::new(fs::File::create(&path).unwrap()),
        written: 0,
    };
    let mut offsets = Vec::new();
    out.write_all(b"%PDF-1.4\n").unwrap();
    let fixed: [&[u8]; 3] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
    ];
    for (i, body) in fixed.iter().enumerate() {
        offsets.push(out.written);
        writeln!(out, "{} 0 obj", i + 1).unwrap();
        out.write_all(body).unwrap();
        out.write_all(b"\nendobj\n").unwrap();
    }
    for (i, object) in objects.iter().enumerate() {
        offsets.push(out.written);
        writeln!(out, "{} 0 obj", i + 4).unwrap();
        object(&mut out);
        out.write_all(b"\nendobj\n").unwrap();
    }
    let size = offsets.len() + 1;
    let xref_at = out.written;
    if xref {
        write!(out, "xref\n0 {size}\n0000000000 65535 f \n").unwrap();
        for offset in &offsets {
            writeln!(out, "{offset:010} 00000 n ").unwrap();
        }
    }
    write!(out, "trailer\n<< /Size {size} /Root 1 0 R >>\n").unwrap();
    if xref {
        write!(out, "startxref\n{xref_at}\n").unwrap();
    }
    out.write_all(b"%%EOF\n").unwrap();
    out.flush().unwrap();
    path
}

/// A writer that counts what it writes (the offsets of a PDF's objects).
struct Counting<W> {
    inner: W,
    written: usize,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// `unit` written `times` times.
fn repeated(out: &mut dyn Write, unit: &[u8], times: usize) {
    for _ in 0..times {
        out.write_all(unit).unwrap();
    }
}

/// Documents hold the same promise as files: a PDF whose objects or page content hold
/// millions of tokens (lopdf keeps each as an object of about a hundred bytes) is
/// refused, or its page not extracted, before they are built; a notebook's cells and
/// outputs are written as they are parsed, never kept (docs/documents.md#limits). An
/// outside test saw a 2 MB PDF of 1,000,000 numbers peak at 125 MB and a 2 MB notebook of
/// 700,000 empty outputs at 84 MB.
fn documents_stay_under_the_promise(slack: usize) {
    let dir = scratch("documents");
    let empty_content: &dyn Fn(&mut dyn Write) = &|out| {
        out.write_all(b"<< /Length 0 >>\nstream\n\nendstream")
            .unwrap();
    };
    let array: &dyn Fn(&mut dyn Write) = &|out| {
        out.write_all(b"[").unwrap();
        repeated(out, b"0 ", 1_000_000);
        out.write_all(b"]").unwrap();
    };
    let content = |ops: usize| {
        move |out: &mut dyn Write| {
            write!(out, "<< /Length {} >>\nstream\n", ops * 6).unwrap();
            repeated(out, b"0 0 m\n", ops);
            out.write_all(b"endstream").unwrap();
        }
    };
    let big_page = content(700_000);
    let documents = [
        pdf_file(&dir, "array.pdf", &[empty_content, array], true),
        pdf_file(&dir, "array-no-xref.pdf", &[empty_content, array], false),
        pdf_file(&dir, "page.pdf", &[&big_page], true),
    ];
    let notebook = |name: &str, cell: &[u8], unit: &[u8], times: usize, end: &[u8]| {
        let path = dir.join(name);
        let mut out = BufWriter::new(fs::File::create(&path).unwrap());
        out.write_all(b"{\"cells\": [").unwrap();
        out.write_all(cell).unwrap();
        for i in 0..times {
            if i > 0 {
                out.write_all(b",").unwrap();
            }
            out.write_all(unit).unwrap();
        }
        out.write_all(end).unwrap();
        out.write_all(b"], \"metadata\": {}, \"nbformat\": 4}")
            .unwrap();
        out.flush().unwrap();
        path
    };
    let notebooks = [
        notebook(
            "outputs.ipynb",
            b"{\"cell_type\": \"code\", \"outputs\": [",
            b"{}",
            700_000,
            b"], \"source\": \"(defun f ())\"}",
        ),
        notebook("cells.ipynb", b"", b"{\"cell_type\":\"raw\"}", 100_000, b""),
        notebook(
            "lines.ipynb",
            b"{\"cell_type\": \"code\", \"source\": [",
            b"\"\"",
            700_000,
            b"]}",
        ),
    ];
    // The same views of an empty page and an empty notebook: the program's own peak
    // (see check_every_view).
    let empty_pdf = pdf_file(&dir, "empty.pdf", &[empty_content], true);
    let empty_notebook = notebook("empty.ipynb", b"", b"", 0, b"");
    let mut failures = Vec::new();
    for path in documents.iter().chain(&notebooks) {
        let size = fs::metadata(path).unwrap().len() as usize;
        let limit = 4 * size + 8 * MIB + slack;
        let empty = match path.extension().and_then(|e| e.to_str()) {
            Some("pdf") => &empty_pdf,
            _ => &empty_notebook,
        };
        for view in [&[][..], &["--json"], &["--lines", "1..3"]] {
            let args: Vec<&str> = [view, &[path.to_str().unwrap()]].concat();
            let (_, own) = peak_and_code(&[view, &[empty.to_str().unwrap()]].concat());
            let (code, peak) = peak_and_code(&args);
            // Refused (1) or read (0), never killed.
            assert!(code == 0 || code == 1, "{args:?} exited with {code}");
            if peak.saturating_sub(own.saturating_sub(RELEASE_FLOOR)) >= limit {
                failures.push(format!(
                    "{args:?}: {} KB ({} KB for an empty one), over {} KB",
                    peak / 1024,
                    own / 1024,
                    limit / 1024
                ));
            }
        }
    }
    let _ = fs::remove_dir_all(&dir);
    assert!(
        failures.is_empty(),
        "documents over the promise: {failures:#?}"
    );
}

/// `find --callees` lists, for each entry, the definitions of each name it calls (up to
/// 256): shared, not copied into each entry. A name defined 20,000 times, each definition
/// calling it, copied them into every entry: 1,011 MB; shared, 69 MB. Bound: 128 MB.
#[test]
fn callees_share_the_definitions_of_each_callee() {
    let dir = scratch("callees");
    dense_file(&dir, "defs.lisp", b"(defun foo (x) (foo x))\n", 20_000 * 24);
    let peak = peak_bytes(&["find", "--callees", "foo", dir.to_str().unwrap()]);
    let _ = fs::remove_dir_all(&dir);
    assert!(peak < 128 * MIB, "find --callees: peak {} KB", peak / 1024);
}
