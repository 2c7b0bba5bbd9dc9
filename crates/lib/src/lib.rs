//! The library of lisp-read-file: everything between the reader and the surfaces.
//!
//! The layers are drawn once, in the repository's `ARCHITECTURE.md`. This crate takes the
//! reader crate (`lisp_read_file_reader`: [`source`], [`scan`], [`features`], [`grammar`],
//! [`outline`], [`cancel`], re-exported here under the same names) and adds:
//!
//! * [`guard`]: the only code that touches the file system: roots, refusals, bytes,
//!   windows of large files, directory walks.
//! * [`document`]: the text of PDF, DOCX and notebook files, from bytes the guard read.
//! * [`pattern`]: user patterns (regular expressions or literal text) at bounded cost.
//! * [`view`]: the collapsed, raw and grep views, pure functions of source and outline.
//! * [`project`]: project maps in ASDF order, and the definer tables of a project.
//! * [`find`]: definitions and references across a project.
//! * [`tool`]: the tools' requests, results and strategies; [`tool::read`] is the entry
//!   point of the `lisp-read-file` tool.
//! * [`error`]: the stable error codes every surface reports.
//!
//! The surfaces (the command line, the MCP server) are the binary crate: they are the only
//! code that knows argv, JSON-RPC or editors, and nothing here calls them.

pub use lisp_read_file_reader::{cancel, features, grammar, outline, scan, source};

pub mod definers;
pub mod document;
pub mod error;
pub mod find;
pub mod guard;
pub mod hint;
pub mod index;
pub mod model;
pub mod pattern;
pub mod project;
pub mod shown;
pub mod tool;
pub mod view;

pub use error::{ErrorCode, ToolError};
