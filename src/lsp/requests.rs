//! The requests: what the server offers and how each is answered.

use super::convert::{uri_of, LineIndex};
use super::lookup::{
    document, each_definition, each_symbol, json_text, offset, query_at, symbol_kind, Answer,
    TextAnswer,
};
use super::Server;
use lisp_read_file::features::Features;
use lisp_read_file::index::analysis::{self, FoldKind, Symbol};
use lisp_read_file::index::WorkspaceFile;
use lsp_server::{ErrorCode, Request};
use lsp_types::Position;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

/// Most entries a `workspace/symbol` answer holds.
pub(super) const MAX_WORKSPACE_SYMBOLS: usize = 500;

pub(super) fn capabilities() -> Value {
    json!({
        "positionEncoding": "utf-16",
        "textDocumentSync": {"openClose": true, "change": 2, "save": {"includeText": false}},
        "documentSymbolProvider": true,
        "foldingRangeProvider": true,
        "selectionRangeProvider": true,
        "definitionProvider": true,
        "declarationProvider": true,
        "documentHighlightProvider": true,
        "referencesProvider": true,
        "workspaceSymbolProvider": true,
        "hoverProvider": true,
        "callHierarchyProvider": true,
        "documentLinkProvider": {"resolveProvider": false},
    })
}

/// Most ranges a `selectionRange` answer holds per position: the innermost ones and the
/// top-level form (a deeper chain would nest its JSON past what parsers take).
pub(super) const MAX_SELECTION_DEPTH: usize = 100;
/// Most bytes of top-level forms one `selectionRange` request walks; positions past it
/// are answered with their top-level form alone.
pub(super) const SELECTION_BUDGET_BYTES: usize = 16 * 1024 * 1024;

/// The typed parameters, deserialised from the message's own value (never a copy of it:
/// a message can be 64 MiB).
fn params<T: DeserializeOwned>(method: &str, value: Value) -> Result<T, (ErrorCode, String)> {
    serde_json::from_value(value).map_err(|e| {
        (
            ErrorCode::InvalidParams,
            format!("{method}: invalid parameters: {e}"),
        )
    })
}

pub(super) fn answer(server: &mut Server, request: Request) -> Answer {
    let Request {
        method,
        params: value,
        ..
    } = request;
    match method.as_str() {
        "textDocument/foldingRange" => {
            let p: lsp_types::FoldingRangeParams = params(&method, value)?;
            let data = document(server, &p.text_document.uri)?;
            let folds: Vec<Value> = analysis::folds(&data.bytes)
                .into_iter()
                .map(|f| {
                    json!({
                        "startLine": f.start_line - 1,
                        "endLine": f.end_line - 1,
                        "kind": match f.kind { FoldKind::Comment => "comment", FoldKind::Form => "region" },
                    })
                })
                .collect();
            Ok(Value::Array(folds))
        }
        "textDocument/selectionRange" => {
            let p: lsp_types::SelectionRangeParams = params(&method, value)?;
            let data = document(server, &p.text_document.uri)?;
            let index = LineIndex::new(&data.bytes);
            let forms = analysis::top_level_forms(&data.bytes);
            let mut budget = SELECTION_BUDGET_BYTES.max(data.bytes.len());
            let mut out = Vec::new();
            for position in p.positions.iter().take(10_000) {
                let offset = offset(&index, *position)?;
                let chain = match analysis::form_at(&forms, offset) {
                    Some(top) if top.len() <= budget => {
                        budget -= top.len();
                        analysis::selection_in(&data.bytes, top, offset)
                    }
                    Some(top) => vec![top],
                    None => Vec::new(),
                };
                out.push(selection_value(&index, &chain, *position));
            }
            Ok(Value::Array(out))
        }
        // A definition is where Lisp declares a name too.
        "textDocument/definition" | "textDocument/declaration" => {
            let p: lsp_types::GotoDefinitionParams = params(&method, value)?;
            let at = &p.text_document_position_params;
            let Some(query) = query_at(server, &at.text_document.uri, at.position)? else {
                return Ok(Value::Null);
            };
            let found = server.checked(|server, files| {
                let (mut out, mut cited) = (Vec::new(), Vec::new());
                each_definition(
                    server,
                    files,
                    &query,
                    server.features.as_ref(),
                    &mut |n, file, index, s| {
                        if let Some(uri) = uri_of(&file.path) {
                            out.push(json!({"uri": uri, "range": index.range(s.span)}));
                            cited.push(n);
                        }
                    },
                );
                (Value::Array(out), cited)
            });
            // A name no form spells may be one the project's own macro makes.
            if found.as_array().is_some_and(Vec::is_empty) {
                return Ok(Value::Array(super::macro_made::definitions(server, &query)));
            }
            Ok(found)
        }
        "workspace/symbol" => {
            let p: lsp_types::WorkspaceSymbolParams = params(&method, value)?;
            Ok(Value::Array(workspace_symbols(server, &p.query)))
        }
        "textDocument/hover" => {
            let p: lsp_types::HoverParams = params(&method, value)?;
            let at = &p.text_document_position_params;
            let Some(query) = query_at(server, &at.text_document.uri, at.position)? else {
                return Ok(Value::Null);
            };
            let parts = server.checked(|server, files| {
                let (mut parts, mut cited) = (Vec::new(), Vec::new());
                each_definition(
                    server,
                    files,
                    &query,
                    server.features.as_ref(),
                    &mut |n, file, index, s| {
                        if parts.len() < 5 {
                            parts.push(hover_text(server, file, index, s));
                            cited.push(n);
                        }
                    },
                );
                (parts, cited)
            });
            if parts.is_empty() {
                return Ok(Value::Null);
            }
            Ok(json!({"contents": {"kind": "markdown", "value": parts.join("\n\n---\n\n")}}))
        }
        "textDocument/documentLink" => {
            let p: lsp_types::DocumentLinkParams = params(&method, value)?;
            let data = document(server, &p.text_document.uri)?;
            Ok(super::links::document_links(
                server,
                &p.text_document.uri,
                &data.bytes,
            ))
        }
        method => Err((
            ErrorCode::MethodNotFound,
            format!("{method} is not offered by this server"),
        )),
    }
}

/// The uses of `query` in `files` (its definitions' names left out unless
/// `declarations`), and the files they are in.
fn references(
    server: &Server,
    files: &[WorkspaceFile],
    query: &lisp_read_file::find::SymbolQuery,
    declarations: bool,
) -> (TextAnswer, Vec<usize>) {
    let (mut out, mut cited) = (Vec::new(), Vec::new());
    let features = server.features.as_ref();
    let finder = analysis::Uses::new(query);
    // The files whose words hold the name, read on the worker threads.
    let candidates: Vec<usize> = (0..files.len())
        .filter(|&n| files[n].may_use(query))
        .collect();
    // Each file's ranges made where its text was read, so that only one text per
    // thread is held at a time.
    let found = lisp_read_file::project::par_map(&candidates, &server.cancel, |&n| {
        let file = &files[n];
        let text = server.text(file)?;
        let uses = file.uses(&text, &finder, features);
        // A set: a name may be defined as many times as it is used (methods).
        let mut defined = std::collections::HashSet::new();
        if !declarations {
            each_symbol(file.symbols(), features, &mut |s| {
                if s.named && query.matches_name(s.name()) {
                    defined.insert(s.name_span);
                }
            });
        }
        let last = uses.iter().map(|u| u.end).max().unwrap_or(0);
        let index = LineIndex::through(&text, last);
        let ranges: Vec<_> = uses
            .iter()
            .filter(|u| !defined.contains(u))
            .map(|&span| index.range(span))
            .collect();
        Some((!uses.is_empty(), ranges))
    });
    for (n, found) in candidates.into_iter().zip(found) {
        let (file, Some(found)) = (&files[n], found) else {
            break;
        };
        let Some((used, ranges)) = found else {
            continue;
        };
        let Some(uri) = uri_of(&file.path).filter(|_| used) else {
            continue;
        };
        cited.push(n);
        out.push((uri, ranges));
    }
    let locations: Vec<Location> = out
        .iter()
        .flat_map(|(uri, ranges)| ranges.iter().map(move |&range| Location { uri, range }))
        .collect();
    (json_text("textDocument/references", &locations), cited)
}

fn hover_text(server: &Server, file: &WorkspaceFile, index: &LineIndex, s: &Symbol) -> String {
    let shown = server
        .guard
        .roots()
        .iter()
        .find_map(|r| std::path::Path::new(&file.path).strip_prefix(r).ok())
        .map_or(file.path.clone(), |p| p.to_string_lossy().into_owned());
    let line = index.position(s.span.start).line + 1;
    let mut text = format!("```lisp\n{}\n```\n", s.signature().replace("```", "` ` `"));
    if let Some(doc) = s.doc() {
        text.push('\n');
        text.push_str(doc);
        text.push('\n');
    }
    text.push_str(&format!("\n{shown}:{line}"));
    text
}

/// One position's `SelectionRange`: `chain` innermost first, each the parent of the one
/// before, cut to [`MAX_SELECTION_DEPTH`] (the innermost and the top-level form); outside
/// every form, the position itself. Built from the outermost in, with no recursion.
fn selection_value(index: &LineIndex, chain: &[lisp_read_file::scan::Span], at: Position) -> Value {
    let kept: Vec<_> = if chain.len() > MAX_SELECTION_DEPTH {
        let mut kept = chain[..MAX_SELECTION_DEPTH - 1].to_vec();
        kept.extend(chain.last());
        kept
    } else {
        chain.to_vec()
    };
    let mut value: Option<Value> = None;
    for span in kept.iter().rev() {
        let mut node = json!({"range": index.range(*span)});
        if let Some(parent) = value.take() {
            node["parent"] = parent;
        }
        value = Some(node);
    }
    value.unwrap_or_else(|| json!({"range": {"start": at, "end": at}}))
}

/// Whether `method`'s answer is written as JSON text ([`answer_text`]): the answers that
/// grow with a file or the workspace (a document's symbols, the uses of a symbol, the
/// call hierarchy's items and calls). Built
/// as a value tree they cost about 40 times their text (1 GB for the 24 MB of symbols
/// of a 1 MiB file of one-line classes, 580 MB for 13 MB of references).
pub(super) fn answers_as_text(method: &str) -> bool {
    matches!(
        method,
        "textDocument/documentSymbol"
            | "textDocument/references"
            | "textDocument/documentHighlight"
            | "textDocument/prepareCallHierarchy"
            | "callHierarchy/incomingCalls"
            | "callHierarchy/outgoingCalls"
    )
}

/// The answer of a request [`answers_as_text`] names, as JSON text written from typed
/// items without a value tree.
pub(super) fn answer_text(server: &mut Server, request: Request) -> TextAnswer {
    let Request {
        method,
        params: value,
        ..
    } = request;
    match method.as_str() {
        "textDocument/documentSymbol" => {
            let p: lsp_types::DocumentSymbolParams = params(&method, value)?;
            let data = document(server, &p.text_document.uri)?;
            let index = LineIndex::new(&data.bytes);
            let features = server.features.as_ref();
            let symbols: Vec<DocumentSymbol> = data
                .symbols
                .iter()
                .filter(|s| analysis::symbol_read(s, features))
                .map(|s| document_symbol(&index, s, features))
                .collect();
            json_text(&method, &symbols)
        }
        "textDocument/references" => {
            let p: lsp_types::ReferenceParams = params(&method, value)?;
            let at = &p.text_document_position;
            let Some(query) = query_at(server, &at.text_document.uri, at.position)? else {
                return Ok("null".into());
            };
            let declarations = p.context.include_declaration;
            server.checked(|server, files| references(server, files, &query, declarations))
        }
        "textDocument/documentHighlight" => {
            let p: lsp_types::DocumentHighlightParams = params(&method, value)?;
            let at = &p.text_document_position_params;
            let Some(query) = query_at(server, &at.text_document.uri, at.position)? else {
                return Ok("null".into());
            };
            let data = document(server, &at.text_document.uri)?;
            let index = LineIndex::new(&data.bytes);
            let uses = analysis::uses_read(&data.bytes, &query, server.features.as_ref());
            let highlights: Vec<Highlight> = uses
                .into_iter()
                .map(|span| Highlight {
                    range: index.range(span),
                    kind: 1,
                })
                .collect();
            json_text(&method, &highlights)
        }
        "textDocument/prepareCallHierarchy" => {
            super::calls::prepare(server, params(&method, value)?)
        }
        "callHierarchy/incomingCalls" => super::calls::incoming(server, params(&method, value)?),
        "callHierarchy/outgoingCalls" => super::calls::outgoing(server, params(&method, value)?),
        _ => Err((
            ErrorCode::MethodNotFound,
            format!("{method}: not answered as text"),
        )),
    }
}

/// A use of a symbol in a document, as `documentHighlight` writes it (kind 1: text).
#[derive(serde::Serialize)]
struct Highlight {
    range: lsp_types::Range,
    kind: u8,
}

/// A use of a symbol in the workspace, as `references` writes it.
#[derive(serde::Serialize)]
struct Location<'a> {
    uri: &'a lsp_types::Uri,
    range: lsp_types::Range,
}

/// A document symbol as the protocol writes it (its fields in this order).
#[derive(serde::Serialize)]
struct DocumentSymbol<'a> {
    name: &'a str,
    detail: &'a str,
    kind: u32,
    range: lsp_types::Range,
    #[serde(rename = "selectionRange")]
    selection_range: lsp_types::Range,
    children: Vec<DocumentSymbol<'a>>,
}

fn document_symbol<'a>(
    index: &LineIndex,
    s: &'a Symbol,
    features: Option<&Features>,
) -> DocumentSymbol<'a> {
    let name_span = if s.name_span.start >= s.span.start && s.name_span.end <= s.span.end {
        s.name_span
    } else {
        s.span
    };
    DocumentSymbol {
        name: if s.shown().is_empty() { "?" } else { s.shown() },
        detail: s.signature(),
        kind: symbol_kind(s),
        range: index.range(s.span),
        selection_range: index.range(name_span),
        children: s
            .children
            .iter()
            .filter(|c| analysis::symbol_read(c, features))
            .map(|c| document_symbol(index, c, features))
            .collect(),
    }
}

/// How well `name` matches `query` (lowercase): prefix, then substring, then fuzzy (the
/// query's characters in order); `None` when it does not.
fn score(name: &str, query: &str) -> Option<u8> {
    if query.is_empty() {
        return Some(3);
    }
    if name.is_ascii() && query.is_ascii() {
        return score_ascii(name.as_bytes(), query.as_bytes());
    }
    let name = name.to_lowercase();
    if name.starts_with(query) {
        return Some(0);
    }
    if name.contains(query) {
        return Some(1);
    }
    let mut chars = name.chars();
    query.chars().all(|q| chars.any(|c| c == q)).then_some(2)
}

/// [`score`] of an ASCII name, without folding a copy of it (every symbol is scored).
fn score_ascii(name: &[u8], query: &[u8]) -> Option<u8> {
    let same = |a: &[u8]| a.eq_ignore_ascii_case(query);
    if name.len() >= query.len() && same(&name[..query.len()]) {
        return Some(0);
    }
    if name.len() > query.len() && contains_ascii(name, query) {
        return Some(1);
    }
    let mut bytes = name.iter();
    query
        .iter()
        .all(|q| bytes.any(|c| c.to_ascii_lowercase() == *q))
        .then_some(2)
}

/// Whether `name` holds `query` (folded), case-insensitively. A short query is compared
/// at each place (a few bytes each); a long one is searched in a folded copy, so that the
/// cost stays linear in the name (a comparison at each place would cost name × query).
fn contains_ascii(name: &[u8], query: &[u8]) -> bool {
    const COMPARED: usize = 16;
    if query.len() <= COMPARED {
        return name
            .windows(query.len())
            .any(|a| a.eq_ignore_ascii_case(query));
    }
    let folded = name.to_ascii_lowercase();
    memchr::memmem::find(&folded, query).is_some()
}

fn workspace_symbols(server: &mut Server, query: &str) -> Vec<Value> {
    // `pkg:name` asks for `name` (definitions carry their names as written).
    let query = query.trim().to_lowercase();
    let query = query.rsplit(':').next().unwrap_or(&query).to_string();
    server.checked(|server, files| symbols_matching(server, files, &query))
}

/// The best [`MAX_WORKSPACE_SYMBOLS`] symbols for `query`, and the files they are in.
fn symbols_matching(
    server: &Server,
    files: &[WorkspaceFile],
    query: &str,
) -> (Vec<Value>, Vec<usize>) {
    let features = server.features.as_ref();
    let mut found: Vec<(u8, usize, usize, &Symbol)> = Vec::new();
    for (n, file) in files.iter().enumerate() {
        each_symbol(file.symbols(), features, &mut |s| {
            if !s.named {
                return;
            }
            let bare = s.name().rsplit(':').next().unwrap_or(s.name());
            if let Some(rank) = score(bare, query) {
                found.push((rank, bare.len(), n, s));
            }
        });
    }
    found.sort_by_key(|&(rank, len, _, _)| (rank, len));
    found.truncate(MAX_WORKSPACE_SYMBOLS);
    let mut cited: Vec<usize> = found.iter().map(|&(_, _, n, _)| n).collect();
    cited.sort_unstable();
    cited.dedup();
    // One line index per file, however many of its symbols are listed.
    let texts: std::collections::HashMap<usize, _> = cited
        .iter()
        .filter_map(|&n| Some((n, server.text(&files[n])?)))
        .collect();
    let mut indexes: std::collections::HashMap<usize, LineIndex> = Default::default();
    let values = found
        .into_iter()
        .filter_map(|(_, _, n, s)| {
            let file = &files[n];
            let uri = uri_of(&file.path)?;
            let text = texts.get(&n)?;
            let index = indexes.entry(n).or_insert_with(|| LineIndex::new(text));
            Some(json!({
                "name": s.shown(),
                "kind": symbol_kind(s),
                "location": {"uri": uri, "range": index.range(s.span)},
                "containerName": file.path.rsplit('/').next().unwrap_or_default(),
            }))
        })
        .collect();
    (values, cited)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_scores_equal_the_folded_ones() {
        let names = [
            "vector-push",
            "VECTOR-PUSH-EXTEND",
            "push",
            "Vxp",
            "",
            "v",
            "%vector",
            "MY-VECTOR-PUSH-EXTEND-AND-MORE",
        ];
        // The last two queries are longer than the bytes compared in place: searched in a
        // folded copy.
        for name in names {
            for query in [
                "vector-push",
                "push",
                "vp",
                "v",
                "x",
                "pushv",
                "é",
                "vector-push-extend-and",
                "vector-push-extend-but",
            ] {
                let lower = name.to_lowercase();
                let folded = if lower.starts_with(query) {
                    Some(0)
                } else if lower.contains(query) {
                    Some(1)
                } else {
                    let mut chars = lower.chars();
                    query.chars().all(|q| chars.any(|c| c == q)).then_some(2)
                };
                assert_eq!(score(name, query), folded, "{name} {query}");
            }
        }
    }
}
