//! The language server (`lisp-read-file lsp`) through real clients and hostile input.
//!
//! One test binary per real component (ARCHITECTURE.md#tests).

#![allow(unreachable_pub)] // Helpers are `pub` for the sibling modules of this test binary.

#[path = "../common/mod.rs"]
mod common;

mod corpus;
mod editors;
mod hardening;
mod hostile;
mod pytest_lsp;
