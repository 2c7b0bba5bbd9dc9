//! Definitions that the project's own definer macros make (`(define-shape-kind circle)`
//! making `make-circle-shape`): the index reads one file at a time and does not know
//! them, the find library does (it learns the scope's `defmacro`s and instantiates their
//! templates, nothing evaluated: docs/find.md). Asked only when the index has no
//! definition of the name, over each root's files on disk, so a name that a macro call
//! in an unsaved buffer makes is found once it is saved. (Files over the size cap are in
//! the index as `find` searches them, up to 32 times the cap: their plain definitions
//! come from the index.)

use super::convert::uri_of;
use super::Server;
use lisp_read_file::find::{find_kept, is_common_lisp_symbol, FindRequest, SymbolQuery};
use lsp_types::{Position, Range};
use serde_json::{json, Value};

/// The `Location`s of the definitions of `query` that a project macro makes.
pub(super) fn definitions(server: &Server, query: &SymbolQuery) -> Vec<Value> {
    // Common Lisp's own names (what a definition asked at `car` is) are no project's.
    let cl = matches!(query.package.as_deref(), None | Some("cl" | "common-lisp"));
    if cl && is_common_lisp_symbol(&query.name) {
        return Vec::new();
    }
    let roots: Vec<String> = server
        .guard
        .roots()
        .iter()
        .map(|r| r.to_string_lossy().into_owned())
        .collect();
    let request = FindRequest {
        name: Some(written(query)),
        features: server.features_given.clone(),
        ..FindRequest::new(".")
    };
    // All roots in one search: a file under two (nested) roots is searched once. What
    // each file taught is kept while its stamp is the same; its bytes are read again.
    let source = std::sync::Arc::new(lisp_read_file::index::files::Stamped);
    let Ok(found) = find_kept(
        &server.guard,
        &server.grammar,
        &roots,
        &request,
        &server.cancel,
        source,
        Some(server.learned.clone()),
    ) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for d in found.definitions.iter().flatten() {
        // find names a file as answers show it (escaped, below the first root).
        let Some(path) = server.guard.path_of_display(&d.file) else {
            continue;
        };
        // Another definition the index lacks is one an open buffer no longer holds
        // (stale).
        if d.via.is_none() {
            continue;
        }
        let Some(uri) = path.to_str().and_then(uri_of) else {
            continue;
        };
        let at = Position::new(
            d.line.saturating_sub(1) as u32,
            d.column.min(u32::MAX as usize) as u32,
        );
        out.push(json!({"uri": uri, "range": Range::new(at, at)}));
    }
    out
}

/// The query as `find --name` reads it back: `pkg::name`, `(setf name)`, escaped with
/// `|...|` when the folded name holds a character a symbol token cannot.
fn written(query: &SymbolQuery) -> String {
    let plain = |s: &str| {
        !s.is_empty()
            && !s
                .chars()
                .any(|c| c.is_whitespace() || c.is_uppercase() || "()'\"`,;|\\:#".contains(c))
    };
    let escape = |s: &str| {
        if plain(s) {
            s.to_string()
        } else {
            format!("|{}|", s.replace('\\', "\\\\").replace('|', "\\|"))
        }
    };
    let name = escape(&query.name);
    let symbol = match query.package.as_deref() {
        Some("") => format!(":{name}"),
        Some(package) => format!("{}::{name}", escape(package)),
        None => name,
    };
    if query.setf {
        format!("(setf {symbol})")
    } else {
        symbol
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_is_written_back_as_find_reads_it() {
        for text in [
            "make-circle",
            "pkg::make-circle",
            "(setf point-x)",
            ":key",
            "|a b|",
            "|Foo|",
        ] {
            let query = SymbolQuery::parse(text).unwrap();
            let again = SymbolQuery::parse(&written(&query)).unwrap();
            assert_eq!(
                (&again.name, &again.package, again.setf),
                (&query.name, &query.package, query.setf),
                "{text} -> {}",
                written(&query)
            );
        }
    }

    #[test]
    fn common_lisp_names_are_known() {
        assert!(is_common_lisp_symbol("car"));
        assert!(is_common_lisp_symbol("with-standard-io-syntax"));
        assert!(!is_common_lisp_symbol("make-circle-shape"));
    }
}
