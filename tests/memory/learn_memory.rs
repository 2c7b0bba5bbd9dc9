//! What a search learns of a scope's macros is bounded over the scope, not per file: a
//! scope of many generated macro files (each 1 MB of `defmacro`s whose templates call
//! forty functions with the symbol `f1`) peaks at about the same memory whatever the number of files, under
//! a bound proportional to the scope's bound ([`MAX_LEARNED_NODES`]), in a search by name
//! and a search for callers. (Bounded per file only, 16 such files made `--name` reach
//! about 580 MB and `--callers` 129 MB; twice the files, twice that.) The answer names the file
//! where learning stopped, in its text and its JSON.
//!
//! The peak is the child's own maximum resident set size as reported by `wait4`.

use crate::common;
use lisp_read_file::find::learn_cap::MAX_LEARNED_NODES;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");
const MIB: usize = 1 << 20;
/// What a learned value node may cost at the peak, with what holds it and the files
/// learned in parallel (about 120 bytes measured).
const BYTES_PER_NODE: usize = 256;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lrf-learn-mem-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// A scope of `files` files of 1 MB of macros each (about 450,000 value nodes a file).
fn scope(files: usize) -> PathBuf {
    let root = scratch(&format!("{files}"));
    // Each template names `f1` (so that a search for its callers reads every macro) but
    // calls other functions: the answers stay empty, whatever the number of files.
    let body: String = (0..40).map(|j| format!(" (g{j} 'f1 ,x {j})")).collect();
    for f in 0..files {
        let mut text = String::new();
        let mut i = 0;
        while text.len() < MIB {
            text.push_str(&format!(
                "(defmacro def-thing-{f}-{i} (x)\n  `(progn (defun ,(intern (format nil \"MAKE-~A\" x)) (){body})))\n"
            ));
            i += 1;
        }
        fs::write(root.join(format!("m{f:02}.lisp")), text).unwrap();
    }
    root
}

/// The peak resident memory (bytes) and the output of `find ARGS .` in `root`.
fn peak(root: &Path, args: &[&str]) -> (usize, String) {
    let out = std::env::temp_dir().join(format!("lrf-learn-mem-{}.out", std::process::id()));
    let mut command = Command::new(BIN);
    command
        .arg("find")
        .arg("--root")
        .arg(root)
        .args(args)
        .arg(root);
    let (code, text, peak) = common::peak::run_with_peak(&mut command, &out);
    assert!(
        code == 0 || code == 1,
        "{args:?} exited with status {code}: {text}"
    );
    (peak, text)
}

#[test]
fn learning_a_scope_of_many_macro_files_is_bounded_over_the_scope() {
    let (small, large) = (scope(8), scope(24));
    let bound = BYTES_PER_NODE * MAX_LEARNED_NODES;
    for args in [&["--name", "make-foo"][..], &["--callers", "f1"]] {
        let (eight, text) = peak(&small, args);
        let (twenty_four, _) = peak(&large, args);
        eprintln!(
            "{args:?}: 8 files {} MB, 24 files {} MB",
            eight / MIB,
            twenty_four / MIB
        );
        assert!(
            eight < bound && twenty_four < bound,
            "{args:?}: {} MB and {} MB, over {} MB",
            eight / MIB,
            twenty_four / MIB,
            bound / MIB
        );
        // Three times the files, about the same peak (32 MB of slack for the walk and
        // the answer).
        assert!(
            twenty_four < eight + 32 * MIB,
            "{args:?}: 8 files {} MB, 24 files {} MB",
            eight / MIB,
            twenty_four / MIB
        );
        assert!(
            text.contains("learning the scope's macros stopped at its bound")
                && text.contains(".lisp: definitions and calls"),
            "{text}"
        );
        let mut json_args = args.to_vec();
        json_args.push("--json");
        let (_, json) = peak(&small, &json_args);
        let json: serde_json::Value = serde_json::from_str(&json).unwrap();
        let file = json["learning_stopped_at"].as_str().unwrap_or_default();
        assert!(file.ends_with(".lisp"), "{json}");
    }
    let _ = fs::remove_dir_all(&small);
    let _ = fs::remove_dir_all(&large);
}
