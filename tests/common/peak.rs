//! The peak resident memory of a child process, from `wait4` (tests/memory/memory.rs,
//! tests/memory/window_memory.rs).

#![allow(dead_code)] // Each crate uses what it needs.

use std::process::Child;

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
