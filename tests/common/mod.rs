//! What the suites that need outside tools share: the rule for a missing tool.
//!
//! The SBCL oracle and corpus suites need SBCL and Debian's Lisp sources, the Emacs suite
//! needs Emacs, the Python MCP suite needs a virtual environment with the official SDK.
//! `bash .ci/run` installs all of them. A contributor with only Rust installed can still
//! run `cargo test`: a suite whose tool is missing says so on stderr, with how to get it,
//! and passes without running. Under `CI=true` (set by CI, and by `.ci/run` users who want
//! the full check) a missing tool is a failure, so that a broken CI set-up never hides as a
//! green run.

#![allow(dead_code)] // Each test crate uses what it needs.

/// Whether the suite may run: `true` when `present`; when not, `false` with a notice, or a
/// panic under `CI=true`. `what` names the tool, `how` says how to install it.
#[track_caller]
pub fn tool_available(present: bool, what: &str, how: &str) -> bool {
    if present {
        return true;
    }
    let message = format!("{what} is missing: {how} (or run `bash .ci/run`, which installs it)");
    if in_ci() {
        panic!("{message}; CI=true, so this is a failure, not a skip");
    }
    // Written to the process's stderr itself, not through `eprintln!`, which the test
    // harness captures and shows only for failures: the contributor must see this.
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIPPED: {message}");
    false
}

/// `CI` set to anything but empty, `0` or `false`.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}
pub mod cpu;
pub mod mutation;
pub mod peak;
pub mod pytest;
