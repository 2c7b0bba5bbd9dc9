//! The tools as library calls, one home each: request, result, strategies and checks of a
//! tool beside each other. The surfaces (CLI, MCP) only translate arguments and print.
//!
//! * [`mod@read`]: the `lisp-read-file` tool: views of a file, a document or a project
//!   (docs/tool.md), re-exported here (`tool::read`, `tool::ReadRequest`, ...).
//! * [`compat`]: the tools kept verbatim from other hosts: `read_file`
//!   ([`compat::read_file`]), `Read` ([`compat::read_envelope`]) and `read` by path or ASDF
//!   component name ([`compat::read_by_name`]), with their shared line window.
//!
//! The `lisp-find` tool is the [`crate::find`] module: its request and result are the
//! search's own.

pub mod compat;
pub mod read;

pub use compat::{read_by_name, read_envelope, read_file};
pub use read::*;
