//! The MCP server: the real binary over stdio with a raw JSON-RPC client (`client.rs`),
//! hostile clients, confinement, definer tables.
//!
//! One test binary per real component (ARCHITECTURE.md#tests): each file below was a
//! binary of its own; they share one link and `common`.

#![allow(unreachable_pub)] // Helpers are `pub` for the sibling modules of this test binary.

mod callers;
mod client;
mod confinement;
mod definers;
mod growing_file;
mod hints;
mod hostile;
mod kept_files;
mod mcp;
mod mcp_robustness;
mod path_display;
mod read_file_cap;
mod size_cap_and_definer_notes;
mod smaller;
mod walk_cancellation;
