//! Peak memory of the real binary: each measurement a process of its own.
//!
//! One test binary per real component (ARCHITECTURE.md#tests): each file below was a
//! binary of its own; they share one link and `common`.

#![allow(unreachable_pub)] // Helpers are `pub` for the sibling modules of this test binary.

#[path = "../common/mod.rs"]
mod common;

mod learn_memory;
mod memory;
mod walk_memory;
mod window_memory;
