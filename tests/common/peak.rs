//! The peak resident memory of a child process, from `wait4` (tests/memory/memory.rs,
//! tests/memory/window_memory.rs).

#![allow(dead_code)] // Each crate uses what it needs.

use std::path::Path;
use std::process::{Child, Command, Stdio};

/// Waits for `child` (spawned and never waited on): its exit code (`-1` when a signal
/// ended it) and its peak resident memory in bytes. Linux counts in a child's peak the
/// memory map it had before `exec`, so this is an upper bound.
pub fn wait_with_peak(child: Child) -> (i32, usize) {
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    // SAFETY: `pid` is our own child, not reaped yet (the `Child` is never waited on);
    // `status` and `usage` are valid, writable and live for the call.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4 failed");
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    // Linux reports kilobytes.
    (code, usage.ru_maxrss as usize * 1024)
}

/// Runs `command` with no input, its stdout written to `out` (a file: a pipe left unread
/// would block it) and its stderr dropped: its exit code, its output and its peak
/// resident memory in bytes.
pub fn run_with_peak(command: &mut Command, out: &Path) -> (i32, String, usize) {
    // Reaped by wait4 in `wait_with_peak`, which also gives its resource usage.
    #[allow(clippy::zombie_processes)]
    let child = command
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(out).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (code, peak) = wait_with_peak(child);
    let text = std::fs::read_to_string(out).unwrap();
    let _ = std::fs::remove_file(out);
    (code, text, peak)
}
