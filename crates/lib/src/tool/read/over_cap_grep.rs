//! The default strategy's grep of a text file over the size cap (docs/views.md#text-filtered-view):
//! the file is streamed once, line by line, through the text-filtered view; memory is
//! the page and its context, never the file. A line longer than the size cap is searched
//! in its first size-cap bytes, and the view says so.

use super::{empty_meta, too_costly, FileMetadata, ReadResult, Strategy};
use crate::error::{ErrorCode, ToolError};
use crate::guard::Guard;
use crate::view::{StreamedGrep, ViewOptions};

/// Greps `path` (a text file over the cap) with `options`' patterns and context.
pub(super) fn grep(
    guard: &Guard,
    path: &str,
    options: &ViewOptions,
) -> Result<ReadResult, ToolError> {
    let cap = usize::try_from(guard.max_file_bytes()).unwrap_or(usize::MAX);
    let mut grep = StreamedGrep::new(options, cap);
    let file = guard.stream_lines(path, cap, &options.cancel, &mut |line| grep.line(line))?;
    if let Some(e) = too_costly(options, &file.display_path) {
        return Err(e);
    }
    if options.cancel.is_cancelled() {
        return Err(ToolError::new(
            ErrorCode::Cancelled,
            file.display_path,
            "the request was cancelled before its answer was ready; ask again if it is still wanted",
        ));
    }
    let replaced = grep.replaced_invalid_utf8();
    let partly_searched = grep.partly_searched();
    let view = grep.finish(file.total_lines);
    let mut meta = empty_meta(Strategy::Default);
    meta.expanded_forms = view.expanded_forms;
    meta.truncated = view.truncated || !view.cut_lines.is_empty() || partly_searched;
    meta.next_offset = view.next_offset;
    meta.total_lines = usize::try_from(file.total_lines).ok();
    meta.byte_length = usize::try_from(file.info.size).unwrap_or(usize::MAX);
    meta.mtime_ms = file.info.mtime_ms;
    meta.cut_lines = view.cut_lines;
    meta.stopped_at_max_count = view.stopped_at_max_count;
    meta.fallback_encoding = replaced.then(|| "replace".to_string());
    Ok(ReadResult {
        path: file.display_path,
        mode: view.mode,
        content: view.content,
        meta,
        metadata: Some(FileMetadata::of(&file.info)),
        files: None,
        files_skipped: None,
        step: None,
    })
}
