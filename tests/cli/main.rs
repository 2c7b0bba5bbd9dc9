//! The command line: the real binary over argv and stdout.
//!
//! One test binary per real component (ARCHITECTURE.md#tests): each file below was a
//! binary of its own; they share one link and `common`.

#![allow(unreachable_pub)] // Helpers are `pub` for the sibling modules of this test binary.

#[path = "../common/mod.rs"]
mod common;

mod callers;
mod cli;
mod exit_status;
mod transcripts;
