//! Projects: maps, walks and their confinement, find (corpus, oracle, properties, complexity).
//!
//! One test binary per real component (ARCHITECTURE.md#tests): each file below was a
//! binary of its own; they share one link and `common`.

#![allow(unreachable_pub)] // Helpers are `pub` for the sibling modules of this test binary.

#[path = "../common/mod.rs"]
mod common;

mod callers_complexity;
mod callers_oracle;
mod callers_through;
mod find_complexity;
mod find_corpus;
mod find_derived;
mod find_linearity;
mod find_macros;
mod find_oracle;
mod find_packages;
mod find_packages_complexity;
mod find_properties;
mod membership_complexity;
mod model_oracle;
mod project;
mod sbcl_systems;
mod walk_complexity;
mod walk_confinement;
