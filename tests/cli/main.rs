//! The command line: the real binary over argv and stdout.
//!
//! One test binary per real component (ARCHITECTURE.md#tests): each file below was a
//! binary of its own; they share one link and `common`.

#![allow(unreachable_pub)] // Helpers are `pub` for the sibling modules of this test binary.

#[path = "../common/mod.rs"]
mod common;

mod byte_window_cut;
mod callers;
mod cli;
mod collection_budget;
mod escaped_path_note;
mod exit_status;
mod find_answers;
mod matches_only_limit;
mod misplaced_subcommand;
mod note_spelling;
mod project_definers;
mod shown_invisible_chars;
mod terminal_escapes;
mod transcripts;
