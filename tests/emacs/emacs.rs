//! The Emacs package (docs/emacs.md): runs `emacs/test/run-tests.sh`, which byte-compiles
//! its files (`emacs/lisp-read-file*.el`) with warnings as errors and runs its ERT suite in
//! `emacs --batch -Q` against the binary Cargo built for this package (the real
//! `lisp-read-file mcp` process; nothing is mocked).
//!
//! Emacs is required under `CI=true`: there a missing Emacs fails the test. Elsewhere it is
//! skipped with a notice saying how to install it (`tests/common`). `bash .ci/run`
//! installs it (the `emacs-nox` line of `.ci/debian-packages.txt`).

use std::path::Path;
use std::process::Command;

use crate::common;
const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The number of ERT tests the suite defines at least; a run of fewer means tests were
/// lost (a load error, a wrong selector), not that everything passed.
const MIN_TESTS: usize = 53;

#[test]
fn emacs_companion_ert_suite() {
    let emacs = std::env::var("EMACS").unwrap_or_else(|_| "emacs".to_string());
    let present = Command::new(&emacs)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let how = "the Emacs companion tests need it; `apt-get install emacs-nox`";
    if !common::tool_available(present, &format!("`{emacs}`"), how) {
        return;
    }

    let output = Command::new("bash")
        .arg(Path::new(ROOT).join("emacs/test/run-tests.sh"))
        .env("LISP_READ_FILE_BIN", BIN)
        .env("EMACS", &emacs)
        .current_dir(ROOT)
        .output()
        .expect("run bash emacs/test/run-tests.sh");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "emacs/test/run-tests.sh failed ({}):\n{stdout}\n{stderr}",
        output.status
    );

    // ert-run-tests-batch prints "Ran N tests, E results as expected, 0 unexpected", with
    // ", S skipped" when tests were skipped (a Debian source missing outside CI, which the
    // suite fails under CI itself).
    let summary = stderr
        .lines()
        .chain(stdout.lines())
        .find(|line| line.starts_with("Ran "))
        .unwrap_or_else(|| panic!("no ERT summary in the output:\n{stdout}\n{stderr}"));
    let (ran, expected, skipped) = ert_counts(summary);
    assert!(
        ran >= MIN_TESTS
            && summary.contains(" 0 unexpected")
            && expected + skipped == ran
            && (skipped == 0 || !common::in_ci()),
        "unexpected ERT summary: {summary}\n{stdout}\n{stderr}"
    );
    if skipped > 0 {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "SKIPPED: {skipped} ERT tests: {summary}");
    }
}

/// The tests run, as expected and skipped of an ERT summary line.
fn ert_counts(summary: &str) -> (usize, usize, usize) {
    let words: Vec<&str> = summary
        .split([' ', ','])
        .filter(|w| !w.is_empty())
        .collect();
    let before = |word: &str| -> usize {
        words
            .windows(2)
            .find(|pair| pair[1] == word)
            .map_or(0, |pair| pair[0].parse().unwrap_or(0))
    };
    let ran: usize = words[1].parse().expect("the number of tests run");
    (ran, before("results"), before("skipped"))
}

#[test]
fn ert_counts_reads_the_summary_lines() {
    assert_eq!(
        ert_counts("Ran 44 tests, 44 results as expected, 0 unexpected (2026-11-26 22:09:13+0000, 0.98 sec)"),
        (44, 44, 0)
    );
    assert_eq!(
        ert_counts(
            "Ran 44 tests, 42 results as expected, 0 unexpected, 2 skipped (2026-11-26, 1.2 sec)"
        ),
        (44, 42, 2)
    );
}
