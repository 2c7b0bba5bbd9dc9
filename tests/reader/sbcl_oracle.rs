//! SBCL oracle: our top-level form boundaries must match SBCL's reader (docs/reader.md).
//!
//! Run with:
//!
//! ```text
//! cargo test --release --test reader sbcl_oracle -- --nocapture
//! LRF_ORACLE_ROOTS=/some/dir:/other/dir cargo test --release --test reader sbcl_oracle -- --nocapture
//! LRF_ORACLE_BIN=/path/to/other/lisp-read-file cargo test --release --test reader sbcl_oracle
//! ```
//!
//! The corpus is every `*.lisp` and `*.asd` file under `/usr/share/sbcl-source` (Debian
//! package `sbcl-source`) and `/usr/share/common-lisp/source` (Debian `cl-*` packages),
//! or under the colon-separated directories in `LRF_ORACLE_ROOTS`.
//!
//! 1. `tests/oracle/form-ends.lisp` runs once in one SBCL process over all files and
//!    prints, per file, the byte end offsets of all top-level forms as SBCL reads them
//!    (`*read-suppress*` t, nothing evaluated), or FAIL with a reason.
//! 2. Our binary runs `outline --json` over all files (a few invocations, argv-limited).
//! 3. For every file SBCL reads, the `end` of our `form` items must equal SBCL's ends.
//!    For every file, our items must be sorted, non-overlapping and cover every
//!    non-whitespace byte (the lossless property, docs/reader.md, docs/tool.md#outline-json).
//!
//! Missing `sbcl` or `/usr/share/sbcl-source` is a FAILURE under `CI=true` (CI installs
//! both, and a skip would hide a broken CI); elsewhere the test is skipped with a notice
//! on stderr saying how to install them. A full report is also written to
//! `$CARGO_TARGET_TMPDIR/sbcl-oracle-report.txt`.

use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const ORACLE_SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/oracle/form-ends.lisp");
const BUILT_BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");

/// Our binary; `LRF_ORACLE_BIN` may name another build (e.g. to compare releases).
fn bin() -> String {
    std::env::var("LRF_ORACLE_BIN").unwrap_or_else(|_| BUILT_BIN.to_string())
}
use crate::common;
const DEFAULT_ROOTS: &[&str] = &["/usr/share/sbcl-source", "/usr/share/common-lisp/source"];
const REQUIRED_ROOT: &str = "/usr/share/sbcl-source";
/// Paths per invocation of our binary (stays far below ARG_MAX).
const ARGS_PER_INVOCATION: usize = 1000;
/// Context shown on each side of a differing offset.
const CONTEXT: usize = 60;
const MAX_FILE_BYTES: &str = "104857600";

// ---------------------------------------------------------------------------------------
// Corpus

fn is_lisp_file(p: &Path) -> bool {
    matches!(
        p.extension().and_then(|e| e.to_str()),
        Some("lisp") | Some("asd")
    )
}

/// Every `*.lisp` / `*.asd` file under `roots`, following symlinked directories, each
/// canonical file once, sorted by canonical path.
fn collect_files(roots: &[PathBuf]) -> (Vec<String>, Vec<String>) {
    let mut seen_dirs = HashSet::new();
    let mut files = std::collections::BTreeSet::new();
    let mut skipped = Vec::new();
    let mut stack: Vec<PathBuf> = roots.to_vec();
    while let Some(dir) = stack.pop() {
        let Ok(canon) = dir.canonicalize() else {
            continue;
        };
        if !seen_dirs.insert(canon) {
            continue; // symlink cycle or duplicate
        }
        let Ok(rd) = std::fs::read_dir(&dir) else {
            skipped.push(format!("{}: unreadable directory", dir.display()));
            continue;
        };
        for entry in rd.flatten() {
            let path = entry.path();
            let Ok(md) = std::fs::metadata(&path) else {
                continue;
            }; // dangling symlink
            if md.is_dir() {
                stack.push(path);
            } else if md.is_file() && is_lisp_file(&path) {
                let Ok(canon) = path.canonicalize() else {
                    continue;
                };
                match canon.to_str() {
                    Some(s) if !s.contains(['\n', '\r', '\t']) => {
                        files.insert(s.to_string());
                    }
                    _ => skipped.push(format!("{}: path not representable", path.display())),
                }
            }
        }
    }
    skipped.sort();
    (files.into_iter().collect(), skipped)
}

fn roots_from_env() -> (Vec<PathBuf>, bool) {
    match std::env::var("LRF_ORACLE_ROOTS") {
        Ok(v) if !v.trim().is_empty() => (
            v.split(':')
                .filter(|s| !s.is_empty())
                .map(PathBuf::from)
                .collect(),
            true,
        ),
        _ => (DEFAULT_ROOTS.iter().map(PathBuf::from).collect(), false),
    }
}

/// Whether SBCL (and, unless `LRF_ORACLE_ROOTS` names other sources, its sources) can be
/// used; `false` with a notice when not, a failure under `CI=true` (`tests/common`).
fn sbcl_available() -> bool {
    let sbcl = Command::new("sbcl")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let how = "the SBCL oracle needs it; Debian: `apt-get install sbcl sbcl-source`";
    if !common::tool_available(sbcl, "`sbcl`", how) {
        return false;
    }
    let sources = roots_from_env().1 || Path::new(REQUIRED_ROOT).is_dir();
    let how = "the SBCL oracle compares them; `apt-get install sbcl-source`, or set \
               LRF_ORACLE_ROOTS=dir1:dir2";
    common::tool_available(sources, REQUIRED_ROOT, how)
}

// ---------------------------------------------------------------------------------------
// The SBCL oracle

#[derive(Debug, Clone, PartialEq)]
enum Oracle {
    Ok(Vec<u64>),
    Fail(String),
}

/// Run the oracle script over `files` in one SBCL process. If the process dies before
/// answering for every file (it should not), the file it was on is recorded as a failure
/// and a new process continues with the rest.
fn run_oracle(files: &[String]) -> (Vec<Oracle>, Vec<String>) {
    let mut results: Vec<Oracle> = Vec::with_capacity(files.len());
    let mut problems = Vec::new();
    let mut restarts = 0;
    while results.len() < files.len() {
        let rest = &files[results.len()..];
        let mut child = Command::new("sbcl")
            .arg("--script")
            .arg(ORACLE_SCRIPT)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start sbcl --script {ORACLE_SCRIPT}: {e}"));
        let mut stdin = child.stdin.take().unwrap();
        let input: String = rest.iter().map(|p| format!("{p}\n")).collect();
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes()); // EPIPE if sbcl died: handled below
        });
        let stderr = child.stderr.take().unwrap();
        let err_reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut BufReader::new(stderr), &mut s);
            s
        });
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let before = results.len();
        for line in stdout.split(b'\n') {
            let line = line.expect("reading sbcl stdout");
            let line = String::from_utf8_lossy(&line).into_owned();
            let idx = results.len();
            assert!(
                idx < files.len(),
                "oracle printed more lines than files: {line}"
            );
            let mut parts = line.splitn(3, '\t');
            let (status, path, data) = (
                parts.next().unwrap_or(""),
                parts.next().unwrap_or(""),
                parts.next().unwrap_or(""),
            );
            assert_eq!(
                path,
                files[idx],
                "oracle output out of step at line {}: {line:?}",
                idx - before + 1
            );
            results.push(match status {
                "OK" => Oracle::Ok(
                    data.split_ascii_whitespace()
                        .map(|n| {
                            n.parse()
                                .unwrap_or_else(|_| panic!("bad oracle line {line:?}"))
                        })
                        .collect(),
                ),
                "FAIL" => Oracle::Fail(data.to_string()),
                _ => panic!("unexpected oracle line {line:?}"),
            });
        }
        writer.join().unwrap();
        let status = child.wait().expect("waiting for sbcl");
        let err = err_reader.join().unwrap();
        if results.len() < files.len() {
            let idx = results.len();
            let msg = format!(
                "oracle process died ({status}) on this file; stderr tail: {}",
                tail(&err, 300).replace('\n', " ")
            );
            problems.push(format!("{}: {msg}", files[idx]));
            results.push(Oracle::Fail(msg));
            restarts += 1;
            assert!(
                restarts <= 20,
                "the SBCL oracle keeps dying; last: {}",
                problems.last().unwrap()
            );
        } else if !status.success() {
            problems.push(format!(
                "oracle exited with {status}; stderr: {}",
                tail(&err, 500)
            ));
        }
    }
    (results, problems)
}

fn tail(s: &str, n: usize) -> &str {
    let mut start = s.len().saturating_sub(n);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

// ---------------------------------------------------------------------------------------
// Our binary

#[derive(Debug)]
enum Ours {
    Outline(Value),
    Error {
        code: String,
        message: String,
    },
    /// No line for this file (the binary crashed or printed too little).
    Missing(String),
}

fn run_ours(files: &[String]) -> (Vec<Ours>, Vec<String>) {
    let mut out = Vec::with_capacity(files.len());
    let mut crashes = Vec::new();
    let bin = bin();
    for chunk in files.chunks(ARGS_PER_INVOCATION) {
        let o = Command::new(&bin)
            .args(["outline", "--json", "--max-file-bytes", MAX_FILE_BYTES])
            .args(chunk)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {bin}: {e}"));
        let code = o.status.code();
        if !matches!(code, Some(0) | Some(1)) {
            crashes.push(format!(
                "`{bin} outline --json ...` ({} files from {}) exited with {}; stderr: {}",
                chunk.len(),
                chunk[0],
                o.status,
                tail(&String::from_utf8_lossy(&o.stderr), 2000)
            ));
        }
        let text = String::from_utf8_lossy(&o.stdout);
        let mut lines = text.lines();
        for path in chunk {
            let entry = match lines.next() {
                None => Ours::Missing(format!("no output line ({})", o.status)),
                Some(line) => match serde_json::from_str::<Value>(line) {
                    Err(e) => Ours::Missing(format!("invalid JSON ({e}): {}", clip(line, 200))),
                    Ok(v) => {
                        let got = v.get("path").and_then(Value::as_str).unwrap_or("");
                        if !same_file_name(got, path) {
                            Ours::Missing(format!("output out of order: line has path {got:?}"))
                        } else if let Some(err) = v.get("error") {
                            Ours::Error {
                                code: err
                                    .get("code")
                                    .and_then(Value::as_str)
                                    .unwrap_or("?")
                                    .to_string(),
                                message: err
                                    .get("message")
                                    .and_then(Value::as_str)
                                    .unwrap_or("")
                                    .to_string(),
                            }
                        } else {
                            Ours::Outline(v)
                        }
                    }
                },
            };
            out.push(entry);
        }
        if lines.next().is_some() {
            crashes.push(format!(
                "more output lines than files for the chunk starting at {}",
                chunk[0]
            ));
        }
    }
    (out, crashes)
}

fn same_file_name(reported: &str, arg: &str) -> bool {
    Path::new(reported).file_name() == Path::new(arg).file_name()
}

fn clip(s: &str, n: usize) -> String {
    if s.len() <= n {
        s.to_string()
    } else {
        let mut end = n;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &s[..end])
    }
}

// ---------------------------------------------------------------------------------------
// Checks

#[derive(Debug, Clone)]
struct Item {
    kind: String,
    start: u64,
    end: u64,
    start_line: Option<u64>,
    end_line: Option<u64>,
}

fn items_of(v: &Value) -> Result<Vec<Item>, String> {
    let arr = v
        .get("items")
        .and_then(Value::as_array)
        .ok_or("no \"items\" array")?;
    arr.iter()
        .enumerate()
        .map(|(i, it)| {
            let num = |k: &str| it.get(k).and_then(Value::as_u64);
            Ok(Item {
                kind: it
                    .get("kind")
                    .and_then(Value::as_str)
                    .ok_or(format!("item {i}: no kind"))?
                    .to_string(),
                start: num("start").ok_or(format!("item {i}: no start"))?,
                end: num("end").ok_or(format!("item {i}: no end"))?,
                start_line: num("start_line"),
                end_line: num("end_line"),
            })
        })
        .collect()
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0c)
}

/// The lossless property: items sorted, non-empty, non-overlapping, in bounds, and every
/// byte outside them is whitespace (a leading UTF-8 BOM counts as whitespace).
fn check_cover(bytes: &[u8], v: &Value, items: &[Item]) -> Result<(), String> {
    let len = bytes.len() as u64;
    if let Some(bl) = v.get("byte_length").and_then(Value::as_u64) {
        if bl != len {
            return Err(format!("byte_length {bl} but the file has {len} bytes"));
        }
    } else {
        return Err("no byte_length".into());
    }
    let bom = if bytes.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let mut pos = 0u64; // everything before `pos` is accounted for
    let gap = |from: u64, to: u64| -> Result<(), String> {
        for i in from.max(bom)..to {
            if !is_ws(bytes[i as usize]) {
                return Err(format!(
                    "byte {i} ({}) is not whitespace and lies in no item: {}",
                    show_byte(bytes[i as usize]),
                    context(bytes, i)
                ));
            }
        }
        Ok(())
    };
    for (i, it) in items.iter().enumerate() {
        if it.start >= it.end {
            return Err(format!(
                "item {i} ({}) is empty or inverted: {}..{}",
                it.kind, it.start, it.end
            ));
        }
        if it.end > len {
            return Err(format!(
                "item {i} ({}) ends at {} past end of file {len}",
                it.kind, it.end
            ));
        }
        if it.start < pos {
            return Err(format!(
                "item {i} ({} {}..{}) overlaps or precedes the previous item ending at {pos}",
                it.kind, it.start, it.end
            ));
        }
        gap(pos, it.start)?;
        pos = it.end;
    }
    gap(pos, len)
}

/// Line numbers, counting LF as the line break (CRLF is one break): start_line is the
/// line of `start`, end_line the line of the item's last byte. Reported, not fatal.
fn check_lines(bytes: &[u8], items: &[Item]) -> Option<String> {
    let mut line_starts = vec![0usize];
    line_starts.extend(memchr_all(bytes).map(|i| i + 1));
    let line_of = |off: u64| -> u64 { line_starts.partition_point(|&s| s as u64 <= off) as u64 };
    for it in items {
        let (Some(sl), Some(el)) = (it.start_line, it.end_line) else {
            return Some(format!(
                "{} {}..{}: missing start_line/end_line",
                it.kind, it.start, it.end
            ));
        };
        let (want_s, want_e) = (
            line_of(it.start),
            line_of(it.end.saturating_sub(1).max(it.start)),
        );
        if sl != want_s || el != want_e {
            return Some(format!(
                "{} {}..{}: lines {sl}-{el}, expected {want_s}-{want_e}",
                it.kind, it.start, it.end
            ));
        }
    }
    None
}

fn memchr_all(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    bytes
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .map(|(i, _)| i)
}

fn show_byte(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("{:?}", b as char)
    } else {
        format!("0x{b:02x}")
    }
}

/// `…<60 bytes before>⟦|⟧<60 bytes after>…` around byte offset `at`, escaped on one line.
fn context(bytes: &[u8], at: u64) -> String {
    let at = (at as usize).min(bytes.len());
    let from = at.saturating_sub(CONTEXT);
    let to = (at + CONTEXT).min(bytes.len());
    let esc = |s: &[u8]| String::from_utf8_lossy(s).escape_debug().to_string();
    format!("\"{}⟦|⟧{}\"", esc(&bytes[from..at]), esc(&bytes[at..to]))
}

fn item_at(items: &[Item], off: u64) -> String {
    // the item containing the byte just before `off` (the one that ends there, if any)
    let probe = off.saturating_sub(1);
    match items.iter().find(|it| it.start <= probe && probe < it.end) {
        Some(it) => format!("our {} item {}..{}", it.kind, it.start, it.end),
        None => "no item of ours there".into(),
    }
}

// ---------------------------------------------------------------------------------------
// The comparison

#[derive(Default)]
struct Report {
    files: usize,
    sbcl_ok: usize,
    sbcl_fail: usize,
    forms_compared: usize,
    agreeing: usize,
    disagreements: Vec<String>,
    cover_failures: Vec<String>,
    crashes: Vec<String>,
    refused: Vec<String>,
    line_warnings: Vec<String>,
    sbcl_failures: Vec<String>,
    oracle_problems: Vec<String>,
    kinds: BTreeMap<String, usize>,
}

impl Report {
    fn is_clean(&self) -> bool {
        self.disagreements.is_empty() && self.cover_failures.is_empty() && self.crashes.is_empty()
    }

    fn render(&self, max_per_section: usize) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "=== SBCL oracle comparison ===");
        let _ = writeln!(s, "files:                 {}", self.files);
        let _ = writeln!(s, "SBCL OK files:         {}", self.sbcl_ok);
        let _ = writeln!(s, "forms compared:        {}", self.forms_compared);
        let _ = writeln!(s, "agreeing files:        {}", self.agreeing);
        let _ = writeln!(s, "disagreeing files:     {}", self.disagreements.len());
        let _ = writeln!(s, "SBCL failures:         {}", self.sbcl_fail);
        let _ = writeln!(s, "lossless failures:     {}", self.cover_failures.len());
        let _ = writeln!(
            s,
            "crashes/missing/INTERNAL/unexpected errors: {}",
            self.crashes.len()
        );
        let _ = writeln!(
            s,
            "refused as binary (NUL in first 8 KiB): {}",
            self.refused.len()
        );
        let _ = writeln!(s, "line-number warnings:  {}", self.line_warnings.len());
        let _ = writeln!(s, "item kinds:            {:?}", self.kinds);
        let section = |s: &mut String, title: &str, v: &[String]| {
            if v.is_empty() {
                return;
            }
            let _ = writeln!(s, "\n--- {title} ({}) ---", v.len());
            for x in v.iter().take(max_per_section) {
                let _ = writeln!(s, "{x}");
            }
            if v.len() > max_per_section {
                let _ = writeln!(
                    s,
                    "... and {} more (see the full report file)",
                    v.len() - max_per_section
                );
            }
        };
        section(&mut s, "oracle problems", &self.oracle_problems);
        section(&mut s, "crashes / missing output / errors", &self.crashes);
        section(&mut s, "disagreements", &self.disagreements);
        section(&mut s, "lossless failures", &self.cover_failures);
        section(&mut s, "refused as binary", &self.refused);
        section(
            &mut s,
            "line-number warnings (not fatal)",
            &self.line_warnings,
        );
        section(
            &mut s,
            "files SBCL cannot read (our outline checked for coverage only)",
            &self.sbcl_failures,
        );
        s
    }
}

fn compare(files: &[String]) -> Report {
    let mut r = Report {
        files: files.len(),
        ..Default::default()
    };

    let t = Instant::now();
    let (oracle, oracle_problems) = run_oracle(files);
    eprintln!("sbcl oracle: {} files in {:.2?}", files.len(), t.elapsed());
    r.oracle_problems = oracle_problems;

    let t = Instant::now();
    let (ours, crashes) = run_ours(files);
    eprintln!(
        "lisp-read-file outline: {} files in {:.2?}",
        files.len(),
        t.elapsed()
    );
    r.crashes = crashes;

    for ((path, sb), us) in files.iter().zip(&oracle).zip(&ours) {
        match sb {
            Oracle::Ok(_) => r.sbcl_ok += 1,
            Oracle::Fail(reason) => {
                r.sbcl_fail += 1;
                r.sbcl_failures.push(format!("{path}\n    SBCL: {reason}"));
            }
        }
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                r.crashes
                    .push(format!("{path}: cannot read the file for checking: {e}"));
                continue;
            }
        };
        let v = match us {
            Ours::Outline(v) => v,
            Ours::Missing(why) => {
                r.crashes.push(format!("{path}: {why}"));
                continue;
            }
            Ours::Error { code, message } => {
                let nul_head = bytes.iter().take(8192).any(|&b| b == 0);
                if code == "BINARY_FILE" && nul_head {
                    r.refused.push(format!("{path}: {code}: {message}"));
                } else {
                    r.crashes.push(format!("{path}: error {code}: {message}"));
                }
                continue;
            }
        };
        let items = match items_of(v) {
            Ok(items) => items,
            Err(e) => {
                r.crashes.push(format!("{path}: malformed outline: {e}"));
                continue;
            }
        };
        for it in &items {
            *r.kinds.entry(it.kind.clone()).or_default() += 1;
        }
        if let Err(e) = check_cover(&bytes, v, &items) {
            r.cover_failures.push(format!("{path}: {e}"));
        }
        if let Some(w) = check_lines(&bytes, &items) {
            r.line_warnings.push(format!("{path}: {w}"));
        }
        if let Oracle::Ok(sbcl_ends) = sb {
            let our_ends: Vec<u64> = items
                .iter()
                .filter(|it| it.kind == "form")
                .map(|it| it.end)
                .collect();
            r.forms_compared += sbcl_ends.len();
            if &our_ends == sbcl_ends {
                r.agreeing += 1;
            } else {
                r.disagreements.push(describe_disagreement(
                    path, &bytes, &items, &our_ends, sbcl_ends,
                ));
            }
        }
    }
    r
}

fn describe_disagreement(
    path: &str,
    bytes: &[u8],
    items: &[Item],
    ours: &[u64],
    sbcl: &[u64],
) -> String {
    let i = ours
        .iter()
        .zip(sbcl)
        .position(|(a, b)| a != b)
        .unwrap_or(ours.len().min(sbcl.len()));
    let mut s = format!(
        "{path}\n    {} forms (ours) vs {} (SBCL); first difference at form #{}",
        ours.len(),
        sbcl.len(),
        i + 1
    );
    match ours.get(i) {
        Some(&o) => {
            let line = 1 + bytes[..(o as usize).min(bytes.len())]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            let _ = write!(
                s,
                "\n    ours: form ends at {o} (line {line}): {}",
                context(bytes, o)
            );
        }
        None => {
            let _ = write!(s, "\n    ours: no more forms");
        }
    }
    match sbcl.get(i) {
        Some(&e) => {
            let line = 1 + bytes[..(e as usize).min(bytes.len())]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            let _ = write!(
                s,
                "\n    SBCL: form ends at {e} (line {line}): {} [{}]",
                context(bytes, e),
                item_at(items, e)
            );
        }
        None => {
            let _ = write!(s, "\n    SBCL: no more forms");
        }
    }
    s
}

// ---------------------------------------------------------------------------------------
// Tests

#[test]
fn sbcl_agrees_on_top_level_form_ends() {
    if !sbcl_available() {
        return;
    }
    let (roots, from_env) = roots_from_env();
    let mut existing = Vec::new();
    for root in &roots {
        if root.is_dir() {
            existing.push(root.clone());
        } else if from_env {
            panic!(
                "LRF_ORACLE_ROOTS names {}, which is not a directory",
                root.display()
            );
        } else {
            eprintln!(
                "note: {} is missing; its files are not compared",
                root.display()
            );
        }
    }
    let (files, skipped) = collect_files(&existing);
    for s in &skipped {
        eprintln!("skipped: {s}");
    }
    assert!(
        !files.is_empty(),
        "no *.lisp / *.asd files under {existing:?}"
    );
    eprintln!("corpus: {} files under {:?}", files.len(), existing);

    let report = compare(&files);
    let full = report.render(usize::MAX);
    let report_path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sbcl-oracle-report.txt");
    let _ = std::fs::write(&report_path, &full);
    println!("{}", report.render(200));
    println!("full report: {}", report_path.display());
    assert!(
        report.is_clean(),
        "SBCL oracle: {} disagreeing files, {} lossless failures, {} crashes/errors (see above, or {})",
        report.disagreements.len(),
        report.cover_failures.len(),
        report.crashes.len(),
        report_path.display()
    );
}

/// Expected oracle answer for an edge case: the form ends, or a substring of the reason.
type Expect = Result<&'static [u64], &'static str>;

/// Small files for the reader corners the oracle (and our scanner) must get right.
/// Written to `$CARGO_TARGET_TMPDIR/<subdir>` (one per test: tests run in parallel);
/// returns (canonical path, expected).
fn edge_case_files(subdir: &str) -> Vec<(String, Expect)> {
    #[rustfmt::skip]
    let cases: &[(&str, &[u8], Expect)] = &[
        ("nested-block.lisp", b"#| a #| b |# c |# (a) #|x|#\n(b)\n", Ok(&[21, 31])),
        ("plus-true.lisp", b"#+sbcl (a) (b)\n", Ok(&[10, 14])),
        ("minus-true.lisp", b"#-sbcl (a) (b)\n", Ok(&[10, 14])),
        ("plus-or-twice.lisp", b"#+(or) #+(or) a b c\n", Ok(&[15, 17, 19])),
        ("minus-or-twice.lisp", b"#-(or) #-(or) a b c\n", Ok(&[15, 17, 19])),
        ("conditional-chain.lisp", b"#+sbcl #+sbcl #-sbcl a b c d\n", Ok(&[22, 24, 26, 28])),
        ("conditional-comment.lisp", b"#+sbcl ; c\n (a) (b)\n", Ok(&[15, 19])),
        ("conditional-block.lisp", b"#+(and) #| c |# (a) b\n", Ok(&[19, 21])),
        ("conditional-lines.lisp", b"#+sbcl\n\n;; comment\n\n(a)\n(b)\n", Ok(&[23, 27])),
        ("conditional-read-eval.lisp", b"#+#.(cl:if t '(and) '(or)) (a) (b)\n", Ok(&[30, 34])),
        ("quote-conditional.lisp", b"'#+sbcl a b\n", Ok(&[9, 11])),
        ("strings.lisp", b"\"a\\\"b\\\\\" (x \"y\\\\\") \"multi\nline\"\n", Ok(&[8, 18, 31])),
        ("chars.lisp", b"#\\( #\\) #\\; #\\\" (list #\\( #\\)) #\\Space #\\|\n", Ok(&[3, 7, 11, 15, 30, 38, 42])),
        ("chars-adjacent.lisp", b"(a . b) #\\Space(a) #\\a(b) #\\((b)\n", Ok(&[7, 15, 18, 22, 25, 29, 32])),
        ("char-names.lisp", b"#\\u+41 #\\Newline #\\x41(a)\n", Ok(&[6, 16, 22, 25])),
        ("bars.lisp", b"|a b| |c)d|(e) x\\ y\n", Ok(&[5, 11, 14, 19])),
        ("escapes.lisp", b"a|b c|d foo\\(bar (x)\n", Ok(&[7, 16, 20])),
        ("semicolons.lisp", b"\"a;b\"(c) |a;b|(c) #\\;(a)\n", Ok(&[5, 8, 14, 17, 21, 24])),
        ("adjacent.lisp", b"\"str\"(a)b(c)d\n", Ok(&[5, 8, 9, 12, 13])),
        ("adjacent2.lisp", b"\"\\\\\"(a) #b101(a) :foo(a) pkg:sym(a)\n", Ok(&[4, 7, 13, 16, 21, 24, 32, 35])),
        ("prefixes.lisp", b"'(a) `(b ,c ,@d) #'f #.(x)\n", Ok(&[4, 16, 20, 26])),
        ("backquote.lisp", b"`(,@a ,.b) (c)\n", Ok(&[10, 14])),
        ("sharp-dot-twice.lisp", b"#.#.x (c)\n", Ok(&[5, 9])),
        ("function.lisp", b"#'(lambda (x) x) #'car\n", Ok(&[16, 22])),
        ("sharp-syntax.lisp", b"#1=(a . #1#) #2A((1 2)) #*0101 #c(1 2) #p\"x\" #s(foo) #:foo #x1F #3r12\n",
         Ok(&[12, 23, 30, 38, 44, 52, 58, 63, 69])),
        ("sharp-paren.lisp", b"#(a) (b)\n", Ok(&[4, 8])),
        ("unknown-dispatch.lisp", b"#?foo (b) #3?bar\n", Ok(&[5, 9, 16])),
        ("brackets.lisp", b"[a b] {c}\n", Ok(&[2, 5, 9])),
        ("numbers.lisp", b"1.5e10 -3/4 .5 +.5\n", Ok(&[6, 11, 14, 18])),
        ("line-comment.lisp", b"x;comment\n(y)\n", Ok(&[1, 13])),
        ("comment-in-list.lisp", b"( a ; ) comment\n ) (b)\n", Ok(&[18, 22])),
        ("block-in-list.lisp", b"(a #| ) |# ) (b)\n", Ok(&[12, 16])),
        ("block-after-block.lisp", b"(a #||##|| x|#) #||##|x|# (b)\n", Ok(&[15, 29])),
        ("block-adjacent.lisp", b"#| a |# #|b|#(x)#|c|#\n", Ok(&[16])),
        ("pkg-prefix.lisp", b"sb-impl::(defun g (y) y) cl:(x) (z)\n", Ok(&[24, 31, 35])),
        ("pkg-prefix-conditional.lisp", b"#+sbcl sb-impl::(x) (y)\n", Ok(&[19, 23])),
        ("comma.lisp", b",a ,@b (c) #\\, (d) #\\:(e)\n", Ok(&[2, 6, 10, 14, 18, 22, 25])),
        ("bom.lisp", b"\xEF\xBB\xBF(a)\n", Ok(&[6])),
        ("shebang.lisp", b"#!/usr/bin/sbcl --script\n(a) (b)\n", Ok(&[28, 32])),
        ("crlf.lisp", b"(a)\r\n; c\r\n(b c\r\n d)\r\n", Ok(&[3, 19])),
        ("cr-ff.lisp", b"(a)\r(b)\x0c(c)\n", Ok(&[3, 7, 11])),
        ("utf8.lisp", "(été) (b)\n".as_bytes(), Ok(&[7, 11])),
        ("utf8-symbols.lisp", "λ(x) café\n".as_bytes(), Ok(&[2, 5, 11])),
        ("invalid-utf8.lisp", b"(a \"\xff\xfe\") (b)\n", Ok(&[8, 12])),
        ("empty.lisp", b"", Ok(&[])),
        ("only-comment.lisp", b"; only a comment", Ok(&[])),
        ("no-eol.lisp", b"(a)", Ok(&[3])),
        ("docstring-column-zero.lisp", b"(defun f ()\n  \"x\n(y)\nz\"\n  t)\n(g)\n", Ok(&[28, 32])),
        ("stray-paren.lisp", b"(a))\n(b)\n", Err("unmatched close parenthesis")),
        ("unterminated.lisp", b"(a\n(b)\n", Err("END-OF-FILE")),
        ("unterminated-string.lisp", b"(a) \"abc\n", Err("END-OF-FILE")),
        ("unterminated-block.lisp", b"(a) #| abc\n", Err("END-OF-FILE")),
        ("dangling-conditional.lisp", b"(a) #+sbcl\n", Err("END-OF-FILE")),
        ("sharp-less.lisp", b"#<foo> (b)\n", Err("illegal sharp macro character")),
    ];
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(subdir);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut out = Vec::new();
    for (name, content, want) in cases {
        let p = dir.join(name);
        std::fs::write(&p, content).unwrap();
        out.push((
            p.canonicalize().unwrap().to_str().unwrap().to_string(),
            *want,
        ));
    }
    // SBCL's reader recurses on depth: the run must survive a stack exhaustion
    let deep = dir.join("deep.lisp");
    let text = format!(
        "{}{}\n(after)\n",
        "(".repeat(1_000_000),
        ")".repeat(1_000_000)
    );
    std::fs::write(&deep, text).unwrap();
    out.push((
        deep.canonicalize().unwrap().to_str().unwrap().to_string(),
        Err("CONTROL-STACK-EXHAUSTED"),
    ));
    out
}

/// Pins the oracle script's own behaviour on the reader corners it must get right, so a
/// change to `form-ends.lisp` cannot silently weaken the main test.
#[test]
fn oracle_script_reads_edge_cases() {
    if !sbcl_available() {
        return;
    }
    let cases = edge_case_files("sbcl-oracle-cases");
    let files: Vec<String> = cases.iter().map(|(p, _)| p.clone()).collect();
    let (results, problems) = run_oracle(&files);
    assert!(problems.is_empty(), "oracle problems: {problems:?}");
    let mut bad = Vec::new();
    for ((path, want), got) in cases.iter().zip(&results) {
        let ok = match (want, got) {
            (Ok(w), Oracle::Ok(g)) => *w == g.as_slice(),
            (Err(sub), Oracle::Fail(reason)) => reason.contains(sub),
            _ => false,
        };
        if !ok {
            bad.push(format!("{path}: expected {want:?}, got {got:?}"));
        }
    }
    assert!(
        bad.is_empty(),
        "oracle script misreads:\n{}",
        bad.join("\n")
    );
}

/// The same edge cases through our binary: form ends agree with SBCL, cover is lossless.
#[test]
fn binary_agrees_with_sbcl_on_edge_cases() {
    if !sbcl_available() {
        return;
    }
    let files: Vec<String> = edge_case_files("sbcl-oracle-cases-binary")
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    let report = compare(&files);
    println!("{}", report.render(usize::MAX));
    assert!(
        report.is_clean(),
        "edge cases: {} disagreeing files, {} lossless failures, {} crashes/errors",
        report.disagreements.len(),
        report.cover_failures.len(),
        report.crashes.len()
    );
}
