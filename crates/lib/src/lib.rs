//! The library of lisp-read-file: everything between the reader and the surfaces.
//!
//! The layers are drawn once, in the repository's `ARCHITECTURE.md`. This crate takes the
//! reader crate (`lisp_read_file_reader`: [`source`], [`scan`], [`features`], [`grammar`],
//! [`outline`], [`cancel`], re-exported here under the same names) and adds:
//!
//! * [`guard`]: the only code that touches the file system: roots, refusals, bytes,
//!   windows of large files, directory walks.
//! * [`document`]: the text of PDF, DOCX and notebook files, from bytes the guard read.
//! * [`view`]: the collapsed, raw and grep views, pure functions of source and outline.
//! * [`project`]: project maps in ASDF order; [`definers`]: a project's definer table.
//! * [`find`]: definitions (derived ones included) and references across a project.
//! * [`index`]: a per-file cache of what the language server asks of files and buffers.
//! * [`tool`]: the tools' requests, results and strategies; [`tool::read()`] is the entry
//!   point of the `lisp-read-file` tool.
//! * [`hint`]: the next calls an answer suggests, as data each surface spells its way.
//! * [`error`]: the stable error codes every surface reports.
//!
//! **The public API is what the surfaces, the tests and the benchmarks use**, and no more:
//! the modules above are public, everything else is `pub(crate)` (the crate warns on an
//! unreachable `pub`). Internal modules: `model` (what forms mean beyond their own names:
//! derived definitions), `pattern` (user patterns at bounded cost; [`view::Pattern`] is its
//! public face), `shown` (how user text is escaped and shortened in answers).
//!
//! The surfaces (the command line, the MCP server, the language server) are the binary
//! crate: they are the only code that knows argv, JSON-RPC or editors, and nothing here
//! calls them. The layers are drawn once, in the repository's `ARCHITECTURE.md`.

pub use lisp_read_file_reader::{cancel, features, grammar, outline, scan, source};

pub(crate) mod alternation;
pub(crate) mod caseless;
pub mod definers;
pub mod document;
pub mod error;
pub mod find;
pub mod guard;
pub mod hint;
pub mod index;
pub(crate) mod model;
pub(crate) mod pattern;
pub mod project;
pub(crate) mod shown;
pub mod tool;
pub mod view;

pub use error::{ErrorCode, ToolError};
