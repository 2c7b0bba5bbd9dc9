//! `callHierarchy`: the items are the definitions of the symbol under the cursor (each
//! method its own item); incoming calls are the library's callers of an item's name,
//! outgoing calls its callees (`lisp_read_file::find::calls_in_memory`, the rules of
//! `lisp-read-file find --callers/--callees`), over the workspace as requests see it
//! (open buffers in place of their files). Each call's `fromRanges` are its call sites.

use super::convert::{uri_of, LineIndex};
use super::lookup::{each_definition, each_symbol, json_text, query_at, symbol_kind, TextAnswer};
use super::Server;
use lisp_read_file::find::{calls_in_memory, CalleesEntry, Caller, FindRequest, Use};
use lisp_read_file::index::analysis::{self, Symbol};
use lisp_read_file::index::{Text, WorkspaceFile};
use lisp_read_file::scan::Span;
use lsp_server::ErrorCode;
use lsp_types::{CallHierarchyIncomingCallsParams, CallHierarchyItem, Range, Uri};
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

/// Most call sites (or callee items without one) an `outgoingCalls` answer writes; past
/// them the answer ends (docs/lsp.md).
pub(super) const MAX_OUTGOING_SITES: usize = 100_000;

pub(super) fn prepare(server: &mut Server, p: lsp_types::CallHierarchyPrepareParams) -> TextAnswer {
    let at = &p.text_document_position_params;
    let Some(query) = query_at(server, &at.text_document.uri, at.position)? else {
        return Ok("null".into());
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
    if items.is_empty() {
        return Ok("null".into());
    }
    json_text("textDocument/prepareCallHierarchy", &items)
}

/// A call hierarchy item as the protocol writes it.
#[derive(serde::Serialize)]
struct Item {
    name: String,
    kind: u32,
    detail: String,
    uri: Uri,
    range: Range,
    #[serde(rename = "selectionRange")]
    selection_range: Range,
    data: ItemData,
}

/// An incoming call: the item that calls, and where.
#[derive(serde::Serialize)]
struct IncomingCall {
    from: Item,
    #[serde(rename = "fromRanges")]
    from_ranges: Vec<Range>,
}

/// An outgoing call: the item called, and where the caller calls it.
#[derive(serde::Serialize)]
struct OutgoingCall {
    to: Item,
    #[serde(rename = "fromRanges")]
    from_ranges: Vec<Range>,
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

pub(super) fn incoming(server: &mut Server, p: CallHierarchyIncomingCallsParams) -> TextAnswer {
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
    // Each file's call sites are converted together: one pass over the file, however
    // many of its forms call the name.
    let mut sites: HashMap<&str, Vec<&Use>> = HashMap::new();
    for caller in &callers {
        if by_path.contains_key(caller.file.as_str()) {
            sites
                .entry(caller.file.as_str())
                .or_default()
                .extend(&caller.calls);
        }
    }
    let mut cited: HashMap<&str, (Cited, std::vec::IntoIter<Option<Range>>)> = sites
        .into_iter()
        .map(|(path, uses)| {
            let (file, text) = by_path[path];
            let c = Cited::new(file, text);
            let ranges = use_ranges(text, &c.index, &uses).into_iter();
            (path, (c, ranges))
        })
        .collect();
    let mut out = Vec::new();
    for caller in &callers {
        let Some((c, ranges)) = cited.get_mut(caller.file.as_str()) else {
            continue;
        };
        let from_ranges: Vec<Range> = ranges.take(caller.calls.len()).flatten().collect();
        let from = match c.symbol(caller.line, caller.name.as_deref()) {
            Some(s) => item(c.file, &c.index, s),
            None => line_item(c.file, &c.index, caller),
        };
        let Some(from) = from else { continue };
        out.push(IncomingCall { from, from_ranges });
    }
    json_text("callHierarchy/incomingCalls", &out)
}

pub(super) fn outgoing(
    server: &mut Server,
    p: lsp_types::CallHierarchyOutgoingCallsParams,
) -> TextAnswer {
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
        return Ok("[]".into());
    };
    let caller_index = LineIndex::new(caller_text);
    let mut cited: HashMap<&str, Cited> = HashMap::new();
    let mut out = Vec::new();
    // The item's own definition: the entry at its file and line (a method is one of many
    // entries of its generic function's name).
    let entry = entries
        .iter()
        .find(|e| e.file == data.path && e.line == data.line);
    let callees: &[_] = entry.map_or(&[], |e| &e.callees);
    // All the call sites at once: one pass over the caller's file.
    let uses: Vec<&Use> = callees.iter().flat_map(|c| &c.calls).collect();
    let mut ranges = use_ranges(caller_text, &caller_index, &uses).into_iter();
    // Each callee's sites are written once for each of its definitions: a function
    // calling a name defined many times would answer their product.
    let mut written = 0usize;
    'callees: for callee in callees {
        let from_ranges: Vec<Range> = ranges.by_ref().take(callee.calls.len()).flatten().collect();
        for definition in callee.definitions.iter() {
            let cost = from_ranges.len().max(1);
            if written + cost > MAX_OUTGOING_SITES && !out.is_empty() {
                break 'callees;
            }
            written += cost;
            let Some(&(file, text)) = by_path.get(definition.file.as_str()) else {
                continue;
            };
            let c = cited
                .entry(file.path.as_str())
                .or_insert_with(|| Cited::new(file, text));
            let to = match c.symbol(definition.line, Some(&definition.name)) {
                Some(s) => item(file, &c.index, s),
                None => whole_lines(&c.index, definition.line, definition.line).and_then(|range| {
                    let at = Place {
                        range,
                        selection: range,
                        line: definition.line,
                    };
                    plain_item(file, &definition.name, &definition.name, "", 12, at)
                }),
            };
            if let Some(to) = to {
                out.push(OutgoingCall {
                    to,
                    from_ranges: from_ranges.clone(),
                });
            }
        }
    }
    json_text("callHierarchy/outgoingCalls", &out)
}

fn by_path(files: &[Texted]) -> HashMap<&str, &Texted> {
    files.iter().map(|t| (t.0.path.as_str(), t)).collect()
}

/// A file an answer cites, with what converting its places needs, made once per answer.
struct Cited<'a> {
    file: &'a WorkspaceFile,
    index: LineIndex<'a>,
    /// Its outline's definitions by 1-based line, each line's in outline order.
    by_line: HashMap<usize, Vec<&'a Symbol>>,
}

impl<'a> Cited<'a> {
    fn new(file: &'a WorkspaceFile, text: &'a [u8]) -> Cited<'a> {
        let mut by_line: HashMap<usize, Vec<&Symbol>> = HashMap::new();
        each_symbol(file.symbols(), None, &mut |s| {
            by_line.entry(s.line).or_default().push(s);
        });
        Cited {
            file,
            index: LineIndex::new(text),
            by_line,
        }
    }

    /// The definition at 1-based `line` named `name` (as the outline shows it).
    fn symbol(&self, line: usize, name: Option<&str>) -> Option<&'a Symbol> {
        self.by_line
            .get(&line)?
            .iter()
            .copied()
            .find(|s| name.is_none_or(|n| n == s.shown() || n == s.name()))
    }
}

fn item(file: &WorkspaceFile, index: &LineIndex, s: &Symbol) -> Option<Item> {
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
) -> Option<Item> {
    let uri = uri_of(&file.path)?;
    let data = ItemData {
        path: file.path.clone(),
        line: at.line,
        name: name.to_string(),
    };
    Some(Item {
        name: if shown.is_empty() { "?" } else { shown }.to_string(),
        kind,
        detail: detail.to_string(),
        uri,
        range: at.range,
        selection_range: at.selection,
        data,
    })
}

/// A caller that the outline does not list (a top-level form that defines nothing): its
/// lines.
fn line_item(file: &WorkspaceFile, index: &LineIndex, caller: &Caller) -> Option<Item> {
    let range = whole_lines(index, caller.line, caller.end_line)?;
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
fn whole_lines(index: &LineIndex, line: usize, end_line: usize) -> Option<Range> {
    let start = index.line_start(line.max(1) - 1)?;
    let end = index
        .line_start(end_line)
        .map_or(index.text_len(), |e| e - 1);
    Some(index.range(Span::new(start, end.max(start))))
}

/// The call sites: each use's token (its line is 1-based, its column in characters), in
/// the order of `uses`; `None` for a line past the text. Linear in the text and the
/// uses: they are taken in the text's order, each line's characters decoded once and
/// the tokens found in one pass.
fn use_ranges(bytes: &[u8], index: &LineIndex, uses: &[&Use]) -> Vec<Option<Range>> {
    let mut order: Vec<usize> = (0..uses.len()).collect();
    order.sort_by_key(|&n| (uses[n].line.max(1), uses[n].column));
    let mut columns = Columns::default();
    let offsets: Vec<Option<usize>> = order
        .iter()
        .map(|&n| columns.offset(index, uses[n].line, uses[n].column))
        .collect();
    let ascending: Vec<usize> = offsets.iter().flatten().copied().collect();
    let mut tokens = analysis::tokens_at(bytes, &ascending).into_iter();
    let mut out = vec![None; uses.len()];
    for (&n, offset) in order.iter().zip(offsets) {
        if let Some(at) = offset {
            let token = tokens.next().flatten().unwrap_or(Span::new(at, at));
            out[n] = Some(index.range(token));
        }
    }
    out
}

/// Byte offsets of (line, column in characters) places taken in ascending order: the
/// characters of the current line are decoded once, forward (decoding from the line's
/// start for each place would be quadratic in a long line of calls).
#[derive(Default)]
struct Columns<'a> {
    /// The 0-based line being decoded, where it starts, and the bytes and characters
    /// decoded so far.
    line: Option<usize>,
    start: usize,
    byte: usize,
    seen: usize,
    chars: Option<Box<dyn Iterator<Item = usize> + 'a>>,
}

impl<'a> Columns<'a> {
    /// The offset of 1-based `line`'s character `column` (its end when shorter).
    fn offset(&mut self, index: &LineIndex<'a>, line: usize, column: usize) -> Option<usize> {
        let line = line.max(1) - 1;
        if self.line != Some(line) {
            let text = index.line_text(line)?;
            self.line = Some(line);
            self.start = index.line_start(line)?;
            (self.byte, self.seen) = (0, 0);
            self.chars = Some(Box::new(text.utf8_chunks().flat_map(chunk_chars)));
        }
        let chars = self.chars.as_mut()?;
        while self.seen < column {
            let Some(bytes) = chars.next() else { break };
            self.byte += bytes;
            self.seen += 1;
        }
        Some(self.start + self.byte)
    }
}

/// The byte length of each character of a chunk (an invalid sequence is one character).
fn chunk_chars(chunk: std::str::Utf8Chunk<'_>) -> impl Iterator<Item = usize> + '_ {
    chunk
        .valid()
        .chars()
        .map(char::len_utf8)
        .chain((!chunk.invalid().is_empty()).then_some(chunk.invalid().len()))
}
