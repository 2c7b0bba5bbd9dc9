//! Documents through the tool (docs/documents.md): the guard reads the file's bytes,
//! `crate::document` extracts its text, and the views and strategies apply to that text
//! as to a file's. `meta.document` says what the document is; `meta.byte_length` and the
//! ranges count bytes of the extracted text, `metadata.size` those of the file.

use super::{
    byte_range_result, complete, line_range_result, render_file, FileMetadata, ReadRequest,
    ReadResult, Strategy, KEEP_PER_LINE,
};
use crate::document::{self, Format, Limits};
use crate::error::{ErrorCode, ToolError};
use crate::grammar::Grammar;
use crate::guard::{lines_of, ByteWindow, FileInfo, Guard, LineQuery, LoadedFile, RAISE_CAP};
use crate::view::{ViewOptions, MAX_LINE_CHARS};

/// Reads the document at `request.path` (or `file`, already read) as `format`.
pub(super) fn read_document(
    guard: &Guard,
    grammar: &Grammar,
    request: &ReadRequest,
    options: &ViewOptions,
    format: Format,
    file: Option<LoadedFile>,
) -> Result<ReadResult, ToolError> {
    let file = match file {
        Some(file) => file,
        None => guard.read_document(&request.path)?,
    };
    let limits = Limits::default();
    let extracted = document::extract(
        format,
        &file.bytes,
        &file.display_path,
        &limits,
        &options.cancel,
    )?;
    let info = file.info;
    let text = LoadedFile {
        display_path: file.display_path,
        bytes: extracted.text.into_bytes(),
        mtime_ms: file.mtime_ms,
        info,
    };
    drop(file.bytes);
    let cap = guard.max_file_bytes();
    let mut result = match request.strategy {
        Strategy::Default => render_file(text, grammar, options, Some(extracted.lisp))?,
        Strategy::Complete => {
            if text.bytes.len() as u64 > cap {
                return Err(too_big(&text.display_path, text.bytes.len(), cap));
            }
            complete(text)
        }
        Strategy::ByteRange { start, end } => {
            byte_range_result(text_bytes(text, start, end, cap)?, end)
        }
        Strategy::LineRange {
            start_line,
            end_line,
        } => {
            let count = end_line.map_or(u64::MAX, |end| end - start_line + 1);
            let query = LineQuery {
                first: start_line,
                count: count.min(request.limit as u64),
                keep_per_line: KEEP_PER_LINE,
                long_line_bytes: MAX_LINE_CHARS as u64,
            };
            let shown = FileInfo {
                size: text.bytes.len() as u64,
                ..info.unwrap_or_default()
            };
            let window = lines_of(text.display_path, &text.bytes, query, cap, shown);
            line_range_result(window, options, start_line, end_line)?
        }
    };
    result.meta.document = Some(extracted.info);
    result.metadata = if request.include_metadata {
        info.as_ref().map(FileMetadata::of)
    } else {
        None
    };
    Ok(result)
}

/// A file the guard refused as binary that is a document by its content (a PDF under
/// another name) is read as one; any other stays `BINARY_FILE`.
pub(super) fn sniffed_document(
    guard: &Guard,
    grammar: &Grammar,
    request: &ReadRequest,
    options: &ViewOptions,
    binary: ToolError,
) -> Result<ReadResult, ToolError> {
    let Ok(file) = guard.read_document(&request.path) else {
        return Err(binary);
    };
    match Format::sniff(&file.bytes) {
        Some(format) => read_document(guard, grammar, request, options, format, Some(file)),
        None => Err(binary),
    }
}

/// `SIZE_LIMIT_EXCEEDED` for `complete` on a document whose text is over the size cap.
fn too_big(shown: &str, len: usize, cap: u64) -> ToolError {
    ToolError::new(
        ErrorCode::SizeLimitExceeded,
        shown,
        format!(
            "the text of the document is {len} bytes, over the {cap}-byte cap: {shown}; read \
             a window of it (strategy lineRange or byteRange; on the command line --lines or \
             --bytes), or {RAISE_CAP}"
        ),
    )
}

/// Bytes `start..end` of a document's text, at most `cap` of them, moved to character
/// boundaries as the guard moves a file's.
fn text_bytes(
    text: LoadedFile,
    start: u64,
    end: Option<u64>,
    cap: u64,
) -> Result<ByteWindow, ToolError> {
    let size = text.bytes.len() as u64;
    let asked_end = end.unwrap_or(size);
    let bad = if start > size {
        Some(("start", start))
    } else if asked_end > size {
        Some(("end", asked_end))
    } else {
        None
    };
    if let Some((name, value)) = bad {
        return Err(ToolError::new(
            ErrorCode::InvalidArgument,
            text.display_path.clone(),
            format!(
                "the document's text has {size} bytes: {name} must be at most {size}, not \
                 {value} (reading {}); the valid byte range is 0 to {size}",
                crate::guard::quoted_shown(&text.display_path)
            ),
        ));
    }
    let as_index = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    let is_boundary = |i: usize| i >= text.bytes.len() || text.bytes[i] & 0xC0 != 0x80;
    let mut from = as_index(start);
    while !is_boundary(from) {
        from += 1;
    }
    let mut to = as_index(asked_end.min(start.saturating_add(cap))).max(from);
    while to > from && !is_boundary(to) {
        to -= 1;
    }
    let info = text.info.unwrap_or_default();
    Ok(ByteWindow {
        bytes: text.bytes[from..to].to_vec(),
        display_path: text.display_path,
        start: from as u64,
        end: to as u64,
        info: FileInfo { size, ..info },
    })
}
