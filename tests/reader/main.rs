//! The reader crate on its own and on the real world: SBCL oracle, fixtures, properties, complexity, mutation.
//!
//! One test binary per real component (ARCHITECTURE.md#tests): each file below was a
//! binary of its own; they share one link and `common`.

#![allow(unreachable_pub)] // Helpers are `pub` for the sibling modules of this test binary.

#[path = "../common/mod.rs"]
mod common;

mod complexity;
mod features_oracle;
mod mutation;
mod properties;
mod reader_fixtures;
mod sbcl_oracle;
mod scale;
