//! The Common Lisp client (`clients/common-lisp`, docs/lisp-client.md): runs
//! `clients/common-lisp/tests/run.lisp` in `sbcl --non-interactive`, which compiles the
//! ASDF system `lisp-read-file` (a compiler warning, style warnings included, fails the
//! run) and runs its tests against the binary Cargo built for this package: the real
//! `lisp-read-file mcp` child processes and the real CLI, nothing mocked.
//!
//! SBCL with Debian's `cl-yason` and `cl-bordeaux-threads` is required under `CI=true`:
//! there a missing SBCL fails the test. Elsewhere it is skipped with a notice saying how
//! to install it (`tests/common`). `bash .ci/run` installs them (`.ci/debian-packages.txt`).

use std::path::Path;
use std::process::Command;

use crate::common;
const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The number of Lisp tests the suite defines at least; a run of fewer means tests were
/// lost (a load error, a test file left out), not that everything passed.
const MIN_TESTS: usize = 30;

/// Exits with 0 when ASDF finds the client's dependencies.
const FIND_LIBRARIES: &str = "(uiop:quit (if (and (asdf:find-system \"yason\" nil) \
                              (asdf:find-system \"bordeaux-threads\" nil)) 0 1))";

#[test]
fn common_lisp_client_suite() {
    let sbcl = std::env::var("SBCL").unwrap_or_else(|_| "sbcl".to_string());
    // SBCL, and ASDF finding the two libraries in its default source registry (where
    // Debian's cl-* packages are), in the same image the suite runs in.
    let present = Command::new(&sbcl)
        .args([
            "--non-interactive",
            "--no-userinit",
            "--eval",
            "(require :asdf)",
        ])
        .args(["--eval", FIND_LIBRARIES])
        .output()
        .is_ok_and(|o| o.status.success());
    if !common::tool_available(
        present,
        "SBCL with cl-yason and cl-bordeaux-threads",
        "apt-get install sbcl cl-yason cl-bordeaux-threads",
    ) {
        return;
    }

    let output = Command::new(&sbcl)
        .args(["--non-interactive", "--no-userinit", "--load"])
        .arg(Path::new(ROOT).join("clients/common-lisp/tests/run.lisp"))
        .env("LISP_READ_FILE_BIN", BIN)
        .current_dir(ROOT)
        .output()
        .expect("run sbcl --load clients/common-lisp/tests/run.lisp");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the Common Lisp client's tests failed ({}):\n{stdout}\n{stderr}",
        output.status
    );

    // run.lisp prints "N tests, M failed" last.
    let summary = stdout
        .lines()
        .rev()
        .find(|line| line.ends_with(" failed") && line.contains(" tests, "))
        .unwrap_or_else(|| panic!("no summary in SBCL's output:\n{stdout}\n{stderr}"));
    let words: Vec<&str> = summary.split_whitespace().collect();
    let ran: usize = words[0].parse().expect("the number of tests run");
    assert!(
        ran >= MIN_TESTS && summary == format!("{ran} tests, 0 failed"),
        "unexpected summary: {summary}\n{stdout}\n{stderr}"
    );
}
