//! What several requests look up: an open buffer's data or the file's, the symbol under
//! the cursor, the symbols of a tree and the definitions of a name across the workspace,
//! and the LSP kind of a definer. `requests.rs` and `calls.rs` both use it.

use super::convert::{path_of, LineIndex};
use super::Server;
use lisp_read_file::features::Features;
use lisp_read_file::find::SymbolQuery;
use lisp_read_file::index::analysis::{self, Symbol};
use lisp_read_file::index::{FileData, WorkspaceFile};
use lsp_server::ErrorCode;
use lsp_types::{Position, Uri};
use serde_json::Value;

/// A request's answer: its result, or the error code and message.
pub(super) type Answer = Result<Value, (ErrorCode, String)>;

/// An answer written as JSON text (`requests::answer_text`): the answers that grow with
/// the files, whose value tree would cost about 40 times their text.
pub(super) type TextAnswer = Result<String, (ErrorCode, String)>;

/// `value` as the JSON text of `method`'s answer.
pub(super) fn json_text(method: &str, value: &impl serde::Serialize) -> TextAnswer {
    serde_json::to_string(value).map_err(|e| {
        (
            ErrorCode::InternalError,
            format!("{method}: cannot encode the answer: {e}"),
        )
    })
}

/// An open buffer's data, else the file's, read through the guard (inside the roots only).
pub(super) fn document(server: &Server, uri: &Uri) -> Result<FileData, (ErrorCode, String)> {
    if let Some(d) = server.documents.get(uri, &server.guard) {
        if let Some(why) = &d.refused {
            return Err((ErrorCode::RequestFailed, why.clone()));
        }
        return Ok(d.data.clone());
    }
    let path = path_of(uri).ok_or_else(|| {
        (
            ErrorCode::InvalidParams,
            format!("{} is not open and is not a local file: URI", uri.as_str()),
        )
    })?;
    // The index's data when the file is unchanged (a fill under way holds the index).
    if let Ok(index) = server.index.try_lock() {
        if let Some(data) = index.data_if_unchanged(&server.guard, &path) {
            return Ok(data);
        }
    }
    let loaded = server
        .guard
        .read(&path)
        .map_err(|e| (ErrorCode::InvalidParams, e.to_string()))?;
    Ok(FileData::new(loaded.bytes, &server.grammar))
}

pub(super) fn offset(index: &LineIndex, position: Position) -> Result<usize, (ErrorCode, String)> {
    index.offset(position).ok_or_else(|| {
        (
            ErrorCode::InvalidParams,
            format!(
                "position {}:{} is past the end of the document",
                position.line, position.character
            ),
        )
    })
}

/// The symbol under the cursor, if a token there names one.
pub(super) fn query_at(
    server: &Server,
    uri: &Uri,
    position: Position,
) -> Result<Option<SymbolQuery>, (ErrorCode, String)> {
    let data = document(server, uri)?;
    let index = LineIndex::new(&data.bytes);
    let at = offset(&index, position)?;
    let Some(token) = analysis::token_at(&data.bytes, at) else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(&data.bytes[token.start..token.end]);
    let text = text.trim_start_matches(['\'', '`', ',', '@', '#']);
    Ok(SymbolQuery::parse(text))
}

/// Each symbol of the tree, parents first; under `features`, those the reader reads (a
/// skipped form's children are skipped with it).
pub(super) fn each_symbol<'a>(
    symbols: &'a [Symbol],
    features: Option<&Features>,
    f: &mut dyn FnMut(&'a Symbol),
) {
    let mut stack: Vec<&Symbol> = symbols.iter().rev().collect();
    while let Some(s) = stack.pop() {
        if !analysis::symbol_read(s, features) {
            continue;
        }
        f(s);
        stack.extend(s.children.iter().rev());
    }
}

pub(super) fn each_definition(
    server: &Server,
    files: &[WorkspaceFile],
    query: &SymbolQuery,
    features: Option<&Features>,
    f: &mut dyn FnMut(usize, &WorkspaceFile, &LineIndex, &Symbol),
) {
    for (n, file) in files.iter().enumerate() {
        if !file.may_define(query) {
            continue;
        }
        let mut found = Vec::new();
        each_symbol(file.symbols(), features, &mut |s| {
            if s.named && query.matches_name(s.name()) {
                found.push(s);
            }
        });
        if found.is_empty() {
            continue;
        }
        let Some(text) = server.text(file) else {
            continue;
        };
        let index = LineIndex::new(&text);
        for s in found {
            f(n, file, &index, s);
        }
    }
}

/// The LSP's `SymbolKind` for a definer.
pub(super) fn symbol_kind(s: &Symbol) -> u32 {
    if !s.named {
        return 3; // Namespace
    }
    let k = s.kind().rsplit(':').next().unwrap_or(s.kind());
    match k {
        "defmethod" | "defgeneric" => 6,
        "defclass" | "define-condition" => 5,
        "defstruct" => 23,
        "defvar" | "defparameter" => 13,
        "defconstant" => 14,
        "defpackage" | "define-package" | "in-package" => 4,
        "deftype" => 26,
        _ if k.contains("class") => 5,
        _ if k.contains("var") => 13,
        _ => 12, // Function
    }
}
