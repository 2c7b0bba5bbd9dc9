//! `callHierarchy`: the items are the definitions of the symbol under the cursor (each
//! method its own item); incoming calls are the library's callers of an item's name,
//! outgoing calls its callees (`lisp_read_file::find::calls_in_memory`, the rules of
//! `lisp-read-file find --callers/--callees`), over the workspace as requests see it
//! (open buffers in place of their files). Each call's `fromRanges` are its call sites.

use super::convert::{uri_of, LineIndex};
use super::lookup::{each_definition, each_symbol, query_at, symbol_kind, Answer};
use super::Server;
use lisp_read_file::find::{calls_in_memory, CalleesEntry, Caller, FindRequest, Use};
use lisp_read_file::index::analysis::{self, Symbol};
use lisp_read_file::index::{Text, WorkspaceFile};
use lisp_read_file::scan::Span;
use lsp_server::ErrorCode;
use lsp_types::{CallHierarchyIncomingCallsParams, CallHierarchyItem, Range};
use serde_json::{json, Value};
use std::collections::HashMap;

/// What an item carries from `prepare` to `incoming`/`outgoing`.
#[derive(serde::Serialize, serde::Deserialize)]
struct ItemData {
    /// Absolute path of the definition's file.
    path: String,
    /// 1-based line of the definition's form.
    line: usize,
    /// The name to search callers and callees of, as written (`(setf foo)` too).
    name: String,
}

pub(super) fn prepare(server: &mut Server, p: lsp_types::CallHierarchyPrepareParams) -> Answer {
    let at = &p.text_document_position_params;
    let Some(query) = query_at(server, &at.text_document.uri, at.position)? else {
        return Ok(Value::Null);
    };
    let files = server.workspace();
    let mut items = Vec::new();
    each_definition(
        server,
        &files,
        &query,
        server.features.as_ref(),
        &mut |_, file, index, s| {
            items.extend(item(file, index, s));
        },
    );
    Ok(if items.is_empty() {
        Value::Null
    } else {
        Value::Array(items)
    })
}

fn item_data(item: &CallHierarchyItem) -> Result<ItemData, (ErrorCode, String)> {
    item.data
        .clone()
        .and_then(|d| serde_json::from_value(d).ok())
        .ok_or_else(|| {
            (
                ErrorCode::InvalidParams,
                "the call hierarchy item was not made by this server (its data is missing); \
                 ask textDocument/prepareCallHierarchy again"
                    .to_string(),
            )
        })
}

/// A file of the workspace with its text.
type Texted = (WorkspaceFile, Text);

/// The workspace's files with their texts (those the index keeps without one read again
/// on the worker threads); when one changed since the index read it, the workspace is
/// looked at again, once, with it read anew.
fn texted(server: &mut Server) -> Vec<Texted> {
    let mut round = 0;
    loop {
        round += 1;
        let files = server.workspace();
        let shared: &Server = server;
        let texts = lisp_read_file::project::par_map(&files, &server.cancel, |f| shared.text(f));
        if server.forget_changed() && round < 2 {
            continue;
        }
        return files
            .into_iter()
            .zip(texts)
            .filter_map(|(f, text)| Some((f, text??)))
            .collect();
    }
}

/// The workspace's files as the find library takes them.
fn in_memory(files: &[Texted]) -> Vec<(&str, &[u8])> {
    files
        .iter()
        .map(|(f, text)| (f.path.as_str(), &text[..]))
        .collect()
}

fn search(
    server: &Server,
    files: &[Texted],
    request: FindRequest,
) -> Result<(Vec<Caller>, Vec<CalleesEntry>), (ErrorCode, String)> {
    let request = FindRequest {
        features: server.features_given.clone(),
        ..request
    };
    calls_in_memory(&in_memory(files), &server.grammar, &request, &server.cancel)
        .map_err(|e| (ErrorCode::RequestFailed, e.message))
}

pub(super) fn incoming(server: &mut Server, p: CallHierarchyIncomingCallsParams) -> Answer {
    let data = item_data(&p.item)?;
    let files = texted(server);
    let (callers, _) = search(
        server,
        &files,
        FindRequest {
            callers: Some(data.name),
            ..FindRequest::new(".")
        },
    )?;
    let by_path = by_path(&files);
    let mut out = Vec::new();
    for caller in callers {
        let Some((file, text)) = by_path.get(caller.file.as_str()) else {
            continue;
        };
        let index = LineIndex::new(text);
        let found = find_symbol(file, caller.line, caller.name.as_deref());
        let from = match found {
            Some(s) => item(file, &index, s),
            None => line_item(file, text, &index, &caller),
        };
        let Some(from) = from else { continue };
        out.push(json!({"from": from, "fromRanges": use_ranges(text, &index, &caller.calls)}));
    }
    Ok(Value::Array(out))
}

pub(super) fn outgoing(
    server: &mut Server,
    p: lsp_types::CallHierarchyOutgoingCallsParams,
) -> Answer {
    let data = item_data(&p.item)?;
    let files = texted(server);
    let (_, entries) = search(
        server,
        &files,
        FindRequest {
            callees: Some(data.name.clone()),
            ..FindRequest::new(".")
        },
    )?;
    let by_path = by_path(&files);
    let Some((_, caller_text)) = by_path.get(data.path.as_str()) else {
        return Ok(Value::Array(Vec::new()));
    };
    let caller_index = LineIndex::new(caller_text);
    let mut indexes: HashMap<&str, LineIndex> = HashMap::new();
    let mut out = Vec::new();
    // The item's own definition: the entry at its file and line (a method is one of many
    // entries of its generic function's name).
    let entry = entries
        .iter()
        .find(|e| e.file == data.path && e.line == data.line);
    for callee in entry.iter().flat_map(|e| &e.callees) {
        let from_ranges = use_ranges(caller_text, &caller_index, &callee.calls);
        for definition in &callee.definitions {
            let Some((file, text)) = by_path.get(definition.file.as_str()) else {
                continue;
            };
            let index = indexes
                .entry(file.path.as_str())
                .or_insert_with(|| LineIndex::new(text));
            let to = match find_symbol(file, definition.line, Some(&definition.name)) {
                Some(s) => item(file, index, s),
                None => {
                    whole_lines(text, index, definition.line, definition.line).and_then(|range| {
                        let at = Place {
                            range,
                            selection: range,
                            line: definition.line,
                        };
                        plain_item(file, &definition.name, &definition.name, "", 12, at)
                    })
                }
            };
            if let Some(to) = to {
                out.push(json!({"to": to, "fromRanges": from_ranges}));
            }
        }
    }
    Ok(Value::Array(out))
}

fn by_path(files: &[Texted]) -> HashMap<&str, &Texted> {
    files.iter().map(|t| (t.0.path.as_str(), t)).collect()
}

/// The definition of `file` at 1-based `line` named `name` (as the outline shows it).
fn find_symbol<'a>(file: &'a WorkspaceFile, line: usize, name: Option<&str>) -> Option<&'a Symbol> {
    let mut found = None;
    each_symbol(file.symbols(), None, &mut |s| {
        if found.is_none() && s.line == line && name.is_none_or(|n| n == s.shown() || n == s.name())
        {
            found = Some(s);
        }
    });
    found
}

fn item(file: &WorkspaceFile, index: &LineIndex, s: &Symbol) -> Option<Value> {
    let range = index.range(s.span);
    let selection = if s.name_span.start >= s.span.start && s.name_span.end <= s.span.end {
        index.range(s.name_span)
    } else {
        range
    };
    let at = Place {
        range,
        selection,
        line: s.line,
    };
    let kind = symbol_kind(s);
    plain_item(file, s.shown(), s.name(), s.signature(), kind, at)
}

/// Where an item is: its whole range, its name's, its 1-based line.
struct Place {
    range: Range,
    selection: Range,
    line: usize,
}

/// An item shown as `shown` whose calls are searched by `name`.
fn plain_item(
    file: &WorkspaceFile,
    shown: &str,
    name: &str,
    detail: &str,
    kind: u32,
    at: Place,
) -> Option<Value> {
    let uri = uri_of(&file.path)?;
    let data = ItemData {
        path: file.path.clone(),
        line: at.line,
        name: name.to_string(),
    };
    Some(json!({
        "name": if shown.is_empty() { "?" } else { shown },
        "kind": kind,
        "detail": detail,
        "uri": uri,
        "range": at.range,
        "selectionRange": at.selection,
        "data": data,
    }))
}

/// A caller that the outline does not list (a top-level form that defines nothing): its
/// lines.
fn line_item(
    file: &WorkspaceFile,
    text: &[u8],
    index: &LineIndex,
    caller: &Caller,
) -> Option<Value> {
    let range = whole_lines(text, index, caller.line, caller.end_line)?;
    let shown = caller
        .name
        .clone()
        .unwrap_or_else(|| format!("({} ...)", caller.kind));
    let at = Place {
        range,
        selection: range,
        line: caller.line,
    };
    plain_item(file, &shown, &shown, &caller.signature, 12, at)
}

/// From the start of 1-based `line` to the end of `end_line`.
fn whole_lines(bytes: &[u8], index: &LineIndex, line: usize, end_line: usize) -> Option<Range> {
    let start = line_start(bytes, line)?;
    let end = line_start(bytes, end_line + 1).map_or(bytes.len(), |e| e - 1);
    Some(index.range(Span::new(start, end.max(start))))
}

/// The byte offset where 1-based `line` starts.
fn line_start(bytes: &[u8], line: usize) -> Option<usize> {
    if line <= 1 {
        return Some(0);
    }
    memchr::memchr_iter(b'\n', bytes)
        .nth(line - 2)
        .map(|i| i + 1)
}

/// The call sites: each use's token (its line is 1-based, its column in characters).
fn use_ranges(bytes: &[u8], index: &LineIndex, uses: &[Use]) -> Vec<Range> {
    uses.iter()
        .filter_map(|u| {
            let start = line_start(bytes, u.line)?;
            let line_end =
                memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
            let text = &bytes[start..line_end];
            let mut at = start;
            for (seen, chunk) in text.utf8_chunks().flat_map(chunk_chars).enumerate() {
                if seen == u.column {
                    break;
                }
                at += chunk;
            }
            let token = analysis::token_at(bytes, at).unwrap_or(Span::new(at, at));
            Some(index.range(token))
        })
        .collect()
}

/// The byte length of each character of a chunk (an invalid sequence is one character).
fn chunk_chars(chunk: std::str::Utf8Chunk<'_>) -> impl Iterator<Item = usize> + '_ {
    chunk
        .valid()
        .chars()
        .map(char::len_utf8)
        .chain((!chunk.invalid().is_empty()).then_some(chunk.invalid().len()))
}
