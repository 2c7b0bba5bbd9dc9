//! Windows of a file far larger than the size cap are read with bounded memory: a 400 MB
//! file, made here, is read through the real binary near its end by a line window
//! (`--lines`, a streaming scan), a byte window (`--bytes`, read at its offset), the
//! default raw view (`--offset`, streamed over the cap) and a grep with context (`-c`,
//! streamed); each run's peak resident memory
//! stays far below the file's size. A test of memory, not of time.
//!
//! The peak is the child's own maximum resident set size as `wait4` reports it (as in
//! `tests/memory/memory.rs`); one test in its own file, so that no other test of this process
//! raises the peak a child starts from.

use crate::common;
use std::fs;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");
const MIB: u64 = 1 << 20;
/// The file: this many lines of [`LINE_BYTES`] bytes (400 MB).
const LINES: u64 = 12_500_000;
const LINE_BYTES: u64 = 32;
/// Far below the file's size: the window, the scan buffer and the program.
const PEAK_LIMIT: u64 = 64 * MIB;

fn line(i: u64) -> String {
    format!("{i:012} of the big log ...\n")
}

/// Runs the binary and returns its exit status, stdout and peak resident memory.
fn run(args: &[&str]) -> (i32, String, u64) {
    let out = tempfile_path(&format!("out-{}", args.len()));
    let (code, text, peak) = common::peak::run_with_peak(Command::new(BIN).args(args), &out);
    (code, text, peak as u64)
}

fn tempfile_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("lrf-window-mem-{}-{name}", std::process::id()))
}

#[test]
fn windows_of_a_400_mb_file_need_a_few_megabytes() {
    assert_eq!(line(0).len() as u64, LINE_BYTES);
    let dir = tempfile_path("dir");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.log");
    {
        let mut out = BufWriter::with_capacity(1 << 20, fs::File::create(&path).unwrap());
        for i in 1..=LINES {
            out.write_all(line(i).as_bytes()).unwrap();
        }
        out.flush().unwrap();
    }
    let size = LINES * LINE_BYTES;
    assert_eq!(fs::metadata(&path).unwrap().len(), size);
    let file = path.to_str().unwrap();

    let near_end = format!("{}..{}", LINES - 2, LINES);
    let (code, text, lines_peak) = run(&["--lines", &near_end, file]);
    assert_eq!(code, 0);
    assert_eq!(
        text,
        [line(LINES - 2), line(LINES - 1), line(LINES)].concat()
    );

    let bytes = format!("{}..{}", size - LINE_BYTES, size);
    let (code, text, bytes_peak) = run(&["--bytes", &bytes, file]);
    assert_eq!(code, 0);
    assert_eq!(text, line(LINES));

    let offset = (LINES - 1).to_string();
    let (code, text, offset_peak) = run(&["--offset", &offset, file]);
    assert_eq!(code, 0);
    assert_eq!(text, line(LINES));

    // A grep with context streams the file: a match near its end, with its context.
    let wanted = format!("{:012}", LINES - 1);
    let (code, text, grep_peak) = run(&["-c", &wanted, "--context", "2", file]);
    assert_eq!(code, 0);
    assert_eq!(
        text,
        format!(
            "{}-{}{}-{}{}:{}{}-{}",
            LINES - 3,
            line(LINES - 3),
            LINES - 2,
            line(LINES - 2),
            LINES - 1,
            line(LINES - 1),
            LINES,
            line(LINES)
        )
    );

    // The whole text stays refused: the cap bounds what is loaded.
    let (code, _, complete_peak) = run(&["--strategy", "complete", file]);
    assert_eq!(code, 1);

    let _ = fs::remove_dir_all(&dir);
    for (what, peak) in [
        ("--lines", lines_peak),
        ("--bytes", bytes_peak),
        ("--offset", offset_peak),
        ("-c (grep)", grep_peak),
        ("--strategy complete", complete_peak),
    ] {
        assert!(
            peak < PEAK_LIMIT,
            "{what} on a {size}-byte file peaked at {} KB (limit {} KB)",
            peak / 1024,
            PEAK_LIMIT / 1024
        );
    }
}
