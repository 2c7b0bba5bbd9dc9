//! The open buffers: `didOpen`, `didChange` (incremental), `didSave`, `didClose`, and the
//! diagnostics published for each version.

use super::convert::{normal_path, path_of, LineIndex};
use super::Server;
use lisp_read_file::guard::Guard;
use lisp_read_file::index::analysis::{problems, Severity};
use lisp_read_file::index::incremental::{self, Edit, Parse};
use lisp_read_file::index::FileData;
use lsp_server::Notification;
use lsp_types::{
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams, Uri,
};
use std::collections::HashMap;

/// An open buffer.
pub(super) struct Document {
    pub uri: Uri,
    /// The absolute path of a `file:` URI.
    pub path: Option<String>,
    pub version: i32,
    /// The identity of the file it names (device, inode) through the guard, when it
    /// names one inside the roots.
    pub identity: Option<(u64, u64)>,
    pub data: FileData,
    /// What the last reading of the whole text or of an edit keeps for the next edit
    /// (`None` for a refused buffer).
    pub parse: Option<Parse>,
    /// Why the buffer's text is unknown (a refused `didOpen` or `didChange`): requests
    /// about it get this error, never the file on disk, until a whole text arrives.
    pub refused: Option<String>,
}

#[derive(Default)]
pub(super) struct Documents {
    /// By URI as the client wrote it.
    open: HashMap<String, Document>,
}

/// Most documents open at once (refused ones included); past it `didOpen` is refused
/// and not kept.
pub(super) const MAX_OPEN_DOCUMENTS: usize = 10_000;
/// Most bytes of text all open buffers hold; past it a buffer is refused (unknown).
pub(super) const MAX_OPEN_BYTES: usize = 256 * 1024 * 1024;
/// Longest URI a document may have.
pub(super) const MAX_URI_BYTES: usize = 4096;

impl Documents {
    /// The open document of `uri`, by its text, else by its path with `.`, `..` and `//`
    /// resolved (`file:///r/src/../a.lisp` is the buffer opened as `file:///r/a.lisp`),
    /// else by the file's identity through the guard (a symbolic link, a directory's
    /// other name: one file, one buffer).
    pub(super) fn get(&self, uri: &Uri, guard: &Guard) -> Option<&Document> {
        if let Some(d) = self.open.get(uri.as_str()) {
            return Some(d);
        }
        let path = path_of(uri).map(|p| normal_path(&p))?;
        let by_path = self
            .open
            .values()
            .find(|d| d.path.as_deref() == Some(path.as_str()));
        if by_path.is_some() {
            return by_path;
        }
        let wanted = identity(guard, &path)?;
        self.open.values().find(|d| d.identity == Some(wanted))
    }

    /// Every known buffer read again with `grammar` (the definer tables changed).
    pub(super) fn reread(&mut self, grammar: &lisp_read_file::grammar::Grammar) {
        for d in self.open.values_mut().filter(|d| d.refused.is_none()) {
            d.data = FileData::new(d.data.bytes.to_vec(), grammar);
        }
    }

    /// Bytes of text the open buffers hold, leaving out `except`.
    fn bytes(&self, except: &str) -> usize {
        self.open
            .iter()
            .filter(|(uri, _)| uri.as_str() != except)
            .map(|(_, d)| d.data.bytes.len())
            .sum()
    }

    /// The open buffers whose text is known, by absolute path, for the index.
    pub(super) fn buffers(&self) -> HashMap<String, FileData> {
        self.open
            .values()
            .filter(|d| d.refused.is_none())
            .filter_map(|d| Some((d.path.clone()?, d.data.clone())))
            .collect()
    }
}

/// The identity of the file at `path` through the guard.
fn identity(guard: &Guard, path: &str) -> Option<(u64, u64)> {
    guard.identity(&guard.named_file(path))
}

/// Most bytes one `didChange` may copy: each change costs the buffer's length, so many
/// changes to a big buffer are refused (the buffer is then unknown until a whole text
/// arrives) rather than blocking the server.
pub(super) const MAX_CHANGE_WORK_BYTES: usize = 64 * 1024 * 1024;

pub(super) fn notification(server: &mut Server, n: Notification) -> Result<(), String> {
    let Notification { method, params } = n;
    let bad = |e: serde_json::Error| format!("{method}: invalid parameters: {e}");
    match method.as_str() {
        "textDocument/didOpen" => {
            let p: DidOpenTextDocumentParams = serde_json::from_value(params).map_err(bad)?;
            check_room(server, &p.text_document.uri)?;
            let text = p.text_document.text.into_bytes();
            let refused = check_size(server, &p.text_document.uri, text.len())
                .and_then(|()| check_total(server, &p.text_document.uri, text.len()))
                .err();
            let text = if refused.is_some() { Vec::new() } else { text };
            let (symbols, parse) = incremental::parse(&text, &server.grammar);
            let data = FileData::with_symbols(text, symbols);
            let path = path_of(&p.text_document.uri).map(|p| normal_path(&p));
            let document = Document {
                identity: path.as_deref().and_then(|p| identity(&server.guard, p)),
                path,
                uri: p.text_document.uri,
                version: p.text_document.version,
                data,
                parse: Some(parse),
                refused: refused.clone(),
            };
            if let Some(why) = refused {
                server
                    .documents
                    .open
                    .insert(document.uri.as_str().to_string(), document);
                return Err(why);
            }
            publish(server, &document);
            server
                .documents
                .open
                .insert(document.uri.as_str().to_string(), document);
        }
        "textDocument/didChange" => {
            let p: DidChangeTextDocumentParams = serde_json::from_value(params).map_err(bad)?;
            let uri = p.text_document.uri.clone();
            let (text, edit) = changed(server, &p)?;
            // The diagnostics first: they need the text only.
            publish_text(server, &uri, p.text_document.version, &text);
            let document = server
                .documents
                .open
                .get_mut(uri.as_str())
                .expect("checked above");
            // Only the forms the edit touches are read again, when that is certain.
            let old = (&document.data, document.parse.as_ref());
            let reparsed = match (edit, old) {
                (Some(edit), (data, Some(parse))) => {
                    let (bytes, symbols) = (&data.bytes[..], &data.symbols[..]);
                    incremental::reparse(bytes, symbols, parse, &text, edit, &server.grammar)
                }
                _ => None,
            };
            let (symbols, parse) =
                reparsed.unwrap_or_else(|| incremental::parse(&text, &server.grammar));
            document.data = FileData::with_symbols(text, symbols);
            document.parse = Some(parse);
            document.version = p.text_document.version;
            document.refused = None;
        }
        "textDocument/didClose" => {
            let p: DidCloseTextDocumentParams = serde_json::from_value(params).map_err(bad)?;
            if let Some(document) = server.documents.open.remove(p.text_document.uri.as_str()) {
                send_diagnostics(server, &document.uri, None, Vec::new());
                // The file takes the buffer's place again: read anew, it may have been saved.
                forget(server, document.path.as_deref());
            }
        }
        // Saved text is the buffer's text already; the file is read anew once closed.
        "textDocument/didSave" => {
            let p: lsp_types::DidSaveTextDocumentParams =
                serde_json::from_value(params).map_err(bad)?;
            forget(
                server,
                path_of(&p.text_document.uri)
                    .map(|p| normal_path(&p))
                    .as_deref(),
            );
        }
        "initialized"
        | "workspace/didChangeWatchedFiles"
        | "workspace/didChangeConfiguration"
        | "$/cancelRequest"
        | "$/setTrace" => {}
        _ => {}
    }
    Ok(())
}

/// Makes the index read `path` anew at the next request (the file changed, or its
/// buffer closed).
fn forget(server: &Server, path: Option<&str>) {
    if let (Some(path), Ok(mut index)) = (path, server.index.lock()) {
        index.forget(path);
    }
}

/// The buffer's text after `p`'s changes, and the edit when they are one ranged change;
/// an error leaves the buffer as it was, except when the work bound or the size cap is
/// passed: the buffer is then unknown (its text can no longer follow the editor's).
fn changed(
    server: &mut Server,
    p: &DidChangeTextDocumentParams,
) -> Result<(Vec<u8>, Option<Edit>), String> {
    let uri = p.text_document.uri.as_str().to_string();
    let document = server
        .documents
        .open
        .get(&uri)
        .ok_or_else(|| format!("didChange for {uri} which is not open"))?;
    let (mut text, version) = (document.data.bytes.to_vec(), document.version);
    let refused = document.refused.clone();
    let mut known = refused.is_none();
    let mut work = 0usize;
    let mut edit = None;
    for change in &p.content_changes {
        if change.range.is_some() && !known {
            let why = refused.clone().unwrap_or_else(|| {
                format!("{uri}: the buffer's text is unknown; send its whole text")
            });
            return Err(why);
        }
        work += text.len() + change.text.len();
        if work > MAX_CHANGE_WORK_BYTES && change.range.is_some() {
            let why = format!(
                "didChange for {uri}: {} changes to a {}-byte buffer are over the bound of \
                 {MAX_CHANGE_WORK_BYTES} bytes copied per notification; the buffer is unknown \
                 until the editor sends its whole text (reopen the file)",
                p.content_changes.len(),
                text.len()
            );
            return Err(refuse(server, &uri, why));
        }
        let applied;
        (text, applied) = apply(text, change.range, &change.text).map_err(|why| {
            format!("didChange for {uri}: {why}; the buffer was left at version {version}")
        })?;
        edit = applied.filter(|_| p.content_changes.len() == 1 && known);
        known = true;
        if let Err(why) = check_size(server, &p.text_document.uri, text.len()) {
            return Err(refuse(server, &uri, why));
        }
    }
    if let Err(why) = check_total(server, &p.text_document.uri, text.len()) {
        return Err(refuse(server, &uri, why));
    }
    Ok((text, edit))
}

/// Marks the open buffer `uri` unknown for `why`; returns `why`.
fn refuse(server: &mut Server, uri: &str, why: String) -> String {
    if let Some(document) = server.documents.open.get_mut(uri) {
        document.refused = Some(why.clone());
    }
    why
}

/// Whether `uri` may be opened: a URI of bounded length, and room for one more document.
fn check_room(server: &Server, uri: &Uri) -> Result<(), String> {
    let text = uri.as_str();
    if text.len() > MAX_URI_BYTES {
        return Err(format!(
            "a document's URI is {} bytes, over the limit of {MAX_URI_BYTES}; it is not opened",
            text.len()
        ));
    }
    let open = &server.documents.open;
    if open.len() >= MAX_OPEN_DOCUMENTS && !open.contains_key(text) {
        return Err(format!(
            "{text} is not opened: {MAX_OPEN_DOCUMENTS} documents are open, the most this \
             server keeps; close some (until then, requests about it read the file on disk)"
        ));
    }
    Ok(())
}

/// Whether a text of `len` bytes for `uri` fits with the other open buffers.
fn check_total(server: &Server, uri: &Uri, len: usize) -> Result<(), String> {
    let others = server.documents.bytes(uri.as_str());
    if others + len > MAX_OPEN_BYTES {
        return Err(format!(
            "{} is not kept: the open buffers hold {others} bytes, and its {len} bytes would \
             pass the limit of {MAX_OPEN_BYTES}; close some files, then reopen it (requests \
             about it fail until then)",
            uri.as_str()
        ));
    }
    Ok(())
}

fn check_size(server: &Server, uri: &Uri, len: usize) -> Result<(), String> {
    if len as u64 > server.max_file_bytes {
        return Err(format!(
            "{} is {len} bytes, over the limit of {} (--max-file-bytes); it is not read",
            uri.as_str(),
            server.max_file_bytes
        ));
    }
    Ok(())
}

/// `text` with `range` replaced by `new` (the whole text without a range), and the edit
/// in bytes when there is a range.
fn apply(
    text: Vec<u8>,
    range: Option<lsp_types::Range>,
    new: &str,
) -> Result<(Vec<u8>, Option<Edit>), String> {
    let Some(range) = range else {
        return Ok((new.as_bytes().to_vec(), None));
    };
    let index = LineIndex::new(&text);
    let at = |p: lsp_types::Position| {
        index.offset(p).ok_or_else(|| {
            format!(
                "position {}:{} is past the end of the buffer",
                p.line, p.character
            )
        })
    };
    let (start, end) = (at(range.start)?, at(range.end)?);
    if start > end {
        return Err(format!(
            "range {}:{}-{}:{} ends before it starts",
            range.start.line, range.start.character, range.end.line, range.end.character
        ));
    }
    let mut out = Vec::with_capacity(text.len() - (end - start) + new.len());
    out.extend_from_slice(&text[..start]);
    out.extend_from_slice(new.as_bytes());
    out.extend_from_slice(&text[end..]);
    let edit = Edit {
        start,
        end,
        inserted: new.len(),
    };
    Ok((out, Some(edit)))
}

fn publish(server: &Server, document: &Document) {
    publish_text(
        server,
        &document.uri,
        document.version,
        &document.data.bytes,
    );
}

/// The diagnostics of `bytes`, version `version` of `uri`.
fn publish_text(server: &Server, uri: &Uri, version: i32, bytes: &[u8]) {
    let index = LineIndex::new(bytes);
    let diagnostics: Vec<serde_json::Value> = problems(bytes)
        .into_iter()
        .map(|p| {
            serde_json::json!({
                "range": index.range(p.span),
                "severity": match p.severity { Severity::Error => 1, Severity::Warning => 2, Severity::Information => 3 },
                "code": p.code,
                "source": "lisp-read-file",
                "message": p.message,
            })
        })
        .collect();
    send_diagnostics(server, uri, Some(version), diagnostics);
}

fn send_diagnostics(
    server: &Server,
    uri: &Uri,
    version: Option<i32>,
    diagnostics: Vec<serde_json::Value>,
) {
    let mut params = serde_json::json!({"uri": uri, "diagnostics": diagnostics});
    if let Some(v) = version {
        params["version"] = v.into();
    }
    server.out.send(Notification::new(
        "textDocument/publishDiagnostics".into(),
        params,
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};

    #[test]
    fn changes_apply_by_utf16_ranges_and_refuse_positions_past_the_end() {
        let r = |a, b, c, d| Some(Range::new(Position::new(a, b), Position::new(c, d)));
        let text = "(é x)\n".as_bytes().to_vec();
        let (changed, edit) = apply(text.clone(), r(0, 3, 0, 4), "y").unwrap();
        assert_eq!(changed, "(é y)\n".as_bytes());
        let edit = edit.unwrap();
        assert_eq!((edit.start, edit.end, edit.inserted), (4, 5, 1));
        assert!(apply(text.clone(), r(5, 0, 5, 0), "y").is_err());
        assert!(apply(text.clone(), r(0, 4, 0, 1), "y").is_err());
        assert_eq!(apply(text, None, "z").unwrap(), (b"z".to_vec(), None));
    }
}
