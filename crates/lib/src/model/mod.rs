//! A static model of a Common Lisp project: what its forms mean beyond their own names,
//! read from the outline without evaluating anything.
//!
//! `derived.rs`: the names a definition makes without spelling them as its name (a
//! structure's constructor and accessors, a class slot's accessor, a generic function's
//! `:method` options ...), by the rule its definer table entry names (`:derives`).
//!
//! `packages.rs`: a file's `defpackage` forms read as data and its `in-package`s;
//! `symbols.rs`: a symbol as written (package prefix, folded name); `resolve.rs`: the
//! packages of a scope and the home package of a token, as the reader would intern it.
//!
//! Pure: bytes and classified forms in, names out. No file system, no evaluation.

pub(crate) mod derived;
pub(crate) mod expand;
pub(crate) mod packages;
pub(crate) mod resolve;
pub(crate) mod symbols;

/// Whether `name` (folded: lowercase, no package) is an external symbol of COMMON-LISP:
/// a name no project defines (a search need not look for its definition).
pub fn is_common_lisp_symbol(name: &str) -> bool {
    resolve::common_lisp_symbols().contains(name)
}
