//! The library's views and tools on real files: the views, paging, strategies, the text rule, the guard, documents, the Debian corpus.
//!
//! One test binary per real component (ARCHITECTURE.md#tests): each file below was a
//! binary of its own; they share one link and `common`.

#![allow(unreachable_pub)] // Helpers are `pub` for the sibling modules of this test binary.

#[path = "../common/mod.rs"]
mod common;

mod corpus_views;
mod document_complexity;
mod documents;
mod focused;
mod grep_complexity;
mod guard;
mod paging;
mod strategies;
mod text_rule;
mod views;
