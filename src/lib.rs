//! lisp-read-file: a Lisp-aware structural reader.
//!
//! The pipeline (ARCHITECTURE.md), one module per stage:
//!
//! ```text
//! path ─► guard ─► source ─► scan ─► outline ─► view ─► surfaces (CLI, MCP, Emacs)
//! ```
//!
//! * [`guard`]: the only stage that touches the file system: roots, refusals, bytes.
//! * [`document`]: the text of PDF, DOCX and notebook files, from bytes the guard read.
//! * [`source`]: the bytes, where the text starts (after a BOM), the line index.
//! * [`scan`]: the tolerant, lossless S-expression scanner: bytes → top-level items.
//! * [`grammar`]: the definer table (`grammar/definers.lisp`), read with `lexpr`.
//! * [`outline`]: classifies each form with the definer table.
//! * [`features`]: `#+`/`#-` feature expressions decided against a feature list.
//! * [`view`]: the collapsed, raw and grep views; [`tool`]: the tool's request, result and
//!   reading strategies; [`find`]: definitions and references across a project;
//!   [`surfaces`]: the CLI and the MCP server.

pub mod cancel;
pub mod document;
pub mod error;
pub mod features;
pub mod find;
pub mod grammar;
pub mod guard;
pub mod hint;
pub mod outline;
pub mod pattern;
pub mod project;
pub mod scan;
pub mod source;
pub mod surfaces;
pub mod tool;
pub mod view;

pub use error::{ErrorCode, ToolError};
