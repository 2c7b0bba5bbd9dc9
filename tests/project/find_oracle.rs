//! References checked against an independent count: `tests/oracle/find-uses.py`, a
//! tokenizer written apart from the Rust lexer (another language, another design: it reads
//! every file whole, character by character, with no prefilter and no top-level split),
//! lists every token that is the symbol in every Lisp file of the Debian libraries
//! (`/usr/share/common-lisp/source`); `lisp-read-file find --symbol` must report exactly
//! the same (file, line, column) uses, and each use's `text` must be its line. Symbols
//! chosen to be common and to sit in strings, comments, docstrings and feature expressions
//! (`t`, `x`, `list`, `error`...).
//!
//! Needs `python3` and the Debian `cl-*` packages (`bash .ci/run` installs them); skipped
//! with a notice when missing, a failure under `CI=true`.

use crate::common;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");
const CORPUS: &str = "/usr/share/common-lisp/source";
const SYMBOLS: [&str; 9] = [
    "list", "error", "x", "t", "format", "string", "declare", "car", "cl:car",
];

type Uses = BTreeMap<String, BTreeSet<(u64, u64)>>;

#[test]
fn references_match_an_independent_tokenizer_on_the_debian_libraries() {
    let corpus = Path::new(CORPUS);
    let how = "apt-get install cl-ppcre cl-alexandria ... (the cl-* packages .ci/run lists)";
    if !common::tool_available(
        corpus.is_dir(),
        &format!("the Debian Lisp libraries ({CORPUS})"),
        how,
    ) {
        return;
    }
    let python = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !common::tool_available(python, "python3", "apt-get install python3") {
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/find-uses.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(".")
        .args(SYMBOLS)
        .current_dir(corpus)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let oracle: Value = serde_json::from_slice(&out.stdout).unwrap();
    // Files the oracle leaves out: not UTF-8, or not read cleanly (a project's own reader
    // macros such as cxml's `#"..."`): a handful.
    let left_out: BTreeSet<String> = oracle[""].as_object().unwrap().keys().cloned().collect();
    assert!(left_out.len() < 50, "{left_out:?}");
    let mut checked = 0;
    for symbol in SYMBOLS {
        let run = Command::new(BIN)
            .args(["find", "--symbol", symbol, "--json", "--limit", "100000000"])
            .args(["--max-file-bytes", "100000000", "--root", ".", "."])
            .current_dir(corpus)
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let result: Value = serde_json::from_slice(&run.stdout).unwrap();
        assert_eq!(result["truncated"], false);
        let skipped: BTreeSet<String> = result["files_skipped"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["file"].as_str().unwrap().to_string())
            .collect();
        let mut ours = Uses::new();
        let mut lines: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for r in result["references"].as_array().unwrap() {
            let file = r["file"].as_str().unwrap().to_string();
            let (first, last) = (r["line"].as_u64().unwrap(), r["end_line"].as_u64().unwrap());
            for u in r["uses"].as_array().unwrap() {
                let (line, column) = (u["line"].as_u64().unwrap(), u["column"].as_u64().unwrap());
                assert!(
                    first <= line && line <= last,
                    "{file}:{line} outside its form {first}-{last}"
                );
                // The text is the use's line (cut at 200 characters).
                let text = lines.entry(file.clone()).or_insert_with(|| {
                    std::fs::read_to_string(corpus.join(&file))
                        .unwrap_or_default()
                        .lines()
                        .map(str::to_string)
                        .collect()
                });
                let want: String = text[line as usize - 1]
                    .trim_end_matches('\r')
                    .chars()
                    .take(200)
                    .collect();
                let got = u["text"].as_str().unwrap().trim_end_matches('…');
                assert_eq!(got, want, "{file}:{line}");
                ours.entry(file.clone()).or_default().insert((line, column));
            }
        }
        let mut theirs = Uses::new();
        for (file, uses) in oracle[symbol].as_object().unwrap() {
            if skipped.contains(file) {
                continue;
            }
            for u in uses.as_array().unwrap() {
                theirs
                    .entry(file.clone())
                    .or_default()
                    .insert((u[0].as_u64().unwrap(), u[1].as_u64().unwrap()));
            }
        }
        ours.retain(|file, _| !left_out.contains(file));
        let mut differences = Vec::new();
        for file in ours.keys().chain(theirs.keys()).collect::<BTreeSet<_>>() {
            let empty = BTreeSet::new();
            let (a, b) = (
                ours.get(file).unwrap_or(&empty),
                theirs.get(file).unwrap_or(&empty),
            );
            for extra in a.difference(b) {
                differences.push(format!(
                    "{file}:{}:{}: reported, not a token of {symbol}",
                    extra.0, extra.1
                ));
            }
            // A qualified symbol: the tokenizer lists every token of the name that could
            // be it (the prefix rule); `find` keeps those the reader would read as that
            // symbol (docs/find.md#packages), so a subset. `car` above checks every token.
            if symbol.contains(':') {
                continue;
            }
            for missed in b.difference(a) {
                differences.push(format!(
                    "{file}:{}:{}: a token of {symbol}, not reported",
                    missed.0, missed.1
                ));
            }
        }
        assert!(
            differences.is_empty(),
            "{} differences for {symbol}, the first ones:\n{}",
            differences.len(),
            differences[..differences.len().min(20)].join("\n")
        );
        let count: usize = ours.values().map(BTreeSet::len).sum();
        assert!(
            count > 100,
            "{symbol}: only {count} uses; is the corpus there?"
        );
        checked += count;
    }
    eprintln!("find_oracle: {checked} uses agree with the independent tokenizer");
}
