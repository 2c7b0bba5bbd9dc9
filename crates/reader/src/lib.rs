//! The reader of lisp-read-file: Common Lisp source text to items, forms and outlines,
//! exactly as SBCL's reader splits it, for any bytes (a half-edited file included).
//!
//! Pure: no file system, no I/O, no clocks; bytes in, data out. Usable on its own the way
//! `rustc_lexer` is. The layers and their invariants are drawn in the repository's
//! `ARCHITECTURE.md`; this crate is its first row:
//!
//! * [`source`]: the bytes, where the text starts (after a BOM), the line index.
//! * [`scan`]: the tolerant, lossless S-expression scanner: bytes → top-level items, with
//!   problems as diagnostics on the items, never errors.
//! * [`features`]: `#+`/`#-` feature expressions decided against a feature list.
//! * [`grammar`]: the definer table (`grammar/definers.lisp`), read with `lexpr`.
//! * [`outline`]: each form classified with the definer table: names, signatures,
//!   docstrings, children of containers.
//! * [`cancel`]: the token a long computation polls to stop early.
//!
//! ```
//! use lisp_read_file_reader::{grammar::Grammar, outline::outline_bytes};
//! let grammar = Grammar::builtin();
//! let outline = outline_bytes(b"(defun area (r) \"Area of a circle.\" (* pi r r))\n", &grammar);
//! let form = outline.items[0].form.as_ref().unwrap();
//! assert_eq!(form.name.as_deref(), Some("area"));
//! assert_eq!(form.definer, Some("defun"));
//! ```

pub mod cancel;
pub mod features;
pub mod grammar;
pub mod outline;
pub mod scan;
pub mod source;
