//! The `lisp-read-file` tool as a library call (docs/tool.md): one request type, one result
//! type, both serde types whose JSON is the tool's public contract, the reading strategies,
//! and [`read`]. Documents (`documents.rs`) and project maps (`project.rs`) are two of its
//! paths.

mod byte_window_note;
mod documents;
mod over_cap_grep;
pub mod project;
pub mod schema;

use crate::cancel::CancelToken;
use crate::document::{DocumentInfo, Format};
use crate::error::{ErrorCode, ToolError};
use crate::grammar::Grammar;
use crate::guard::{ByteWindow, FileInfo, Guard, LineQuery, LineWindow, LoadedFile};
use crate::hint::{Hint, HintStyle};
use crate::outline::StreamedOutline;
use crate::pattern::{PatternError, COMPILED_SIZE_LIMIT, MAX_PATTERN_BYTES};
use crate::scan::Diagnostic;
use crate::shown::quoted;
use crate::source::Source;
use crate::view::{self, Comments, CutLine, Mode, Paging, Pattern, ViewOptions, MAX_LINE_CHARS};
use documents::{read_document, sniffed_document};
use serde::{Deserialize, Serialize};

pub use crate::view::{DEFAULT_CONTEXT_LINES, DEFAULT_LIMIT};
pub use byte_window_note::byte_window_note;

/// The parameters of the `lisp-read-file` tool (docs/tool.md).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadRequest {
    /// Relative to the first root, or absolute inside a root.
    pub path: String,
    /// Collapsed view for Lisp files (`false`: raw lines).
    #[serde(default = "yes")]
    pub collapsed: bool,
    /// Expand definitions whose name matches (Rust regex, case-insensitive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_pattern: Option<String>,
    /// Expand forms whose text matches; grep for text files (Rust regex or literal text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_pattern: Option<String>,
    /// With a pattern: show only the matching forms (and the `in-package` in effect),
    /// as a project map does (docs/views.md#only-the-matches).
    #[serde(default)]
    pub matches_only: bool,
    /// 0-based first line.
    #[serde(default)]
    pub offset: usize,
    /// Maximum lines returned (at least 1).
    #[serde(default = "default_limit")]
    pub limit: usize,
    /// Top-level comments in the collapsed view.
    #[serde(default)]
    pub comments: Comments,
    /// Collapsed view: only the forms with these operators (docs/views.md#kinds-and-features).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kinds: Option<Vec<String>>,
    /// Collapsed view: hide the forms `#+`/`#-` exclude under these features.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub features: Option<Vec<String>>,
    /// Context lines around matches in text-filtered mode.
    #[serde(default = "default_context_lines")]
    pub context_lines: usize,
    /// Text-filtered mode: context lines before each match (as `grep -B`); with
    /// `after_context`, they replace `context_lines` (a side not given has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_context: Option<usize>,
    /// Text-filtered mode: context lines after each match (as `grep -A`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_context: Option<usize>,
    /// Text-filtered mode: stop after this many matching lines (as `grep -m`; at least 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_count: Option<usize>,
    /// Number lines in raw mode.
    #[serde(default)]
    pub line_numbers: bool,
    /// How much of the file to read (docs/tool.md#strategies).
    #[serde(default)]
    pub strategy: Strategy,
    /// Add the file's size, modification time, owner and permissions to the result.
    #[serde(default)]
    pub include_metadata: bool,
    /// How much the outline shows of each definition (docs/views.md#detail): `full`,
    /// `no-docstrings`, `names`; a map also `counts`, and takes it as its first step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<view::Detail>,
    /// How the surface spells the hints of the answer (not a parameter: the surface sets
    /// it; docs/tool.md#hints).
    #[serde(skip)]
    pub hints: HintStyle,
}

/// How much of a file a request reads (docs/tool.md#strategies). As JSON, an object with
/// a `type`: `{"type": "byteRange", "start": 0, "end": 100}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", try_from = "StrategyFields")]
pub enum Strategy {
    /// The views: collapsed, raw or grep, paged by `offset` and `limit`.
    #[default]
    Default,
    /// The whole text, verbatim, bounded only by the size cap.
    Complete,
    /// Bytes `start..end` (`end` exclusive; the end of the file when absent), verbatim,
    /// cut to UTF-8 character boundaries.
    ByteRange {
        start: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        end: Option<u64>,
    },
    /// Lines `startLine..=endLine`, 1-based (to the end of the file when `endLine` is
    /// absent), as the raw view shows them.
    LineRange {
        #[serde(rename = "startLine")]
        start_line: u64,
        #[serde(rename = "endLine", default, skip_serializing_if = "Option::is_none")]
        end_line: Option<u64>,
    },
}

/// A strategy as JSON gives it: every member a strategy may have, checked by
/// `TryFrom` (so that `{"type": "complete", "x": 1}` is refused like any unknown member).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StrategyFields {
    #[serde(rename = "type")]
    kind: String,
    start: Option<u64>,
    end: Option<u64>,
    #[serde(rename = "startLine")]
    start_line: Option<u64>,
    #[serde(rename = "endLine")]
    end_line: Option<u64>,
}

impl TryFrom<StrategyFields> for Strategy {
    type Error = String;

    fn try_from(f: StrategyFields) -> Result<Strategy, String> {
        let members = |allowed: &[&str]| -> Result<(), String> {
            let given = [
                ("start", f.start.is_some()),
                ("end", f.end.is_some()),
                ("startLine", f.start_line.is_some()),
                ("endLine", f.end_line.is_some()),
            ];
            match given
                .iter()
                .find(|(name, set)| *set && !allowed.contains(name))
            {
                Some((name, _)) => Err(format!(
                    "strategy {} takes no {name} (it takes {})",
                    f.kind,
                    if allowed.is_empty() {
                        "only type".to_string()
                    } else {
                        format!("type, {}", allowed.join(" and "))
                    }
                )),
                None => Ok(()),
            }
        };
        match f.kind.as_str() {
            "default" => members(&[]).map(|()| Strategy::Default),
            "complete" => members(&[]).map(|()| Strategy::Complete),
            "byteRange" => {
                members(&["start", "end"])?;
                let start = f
                    .start
                    .ok_or("strategy byteRange needs start (a byte offset, from 0)")?;
                Ok(Strategy::ByteRange { start, end: f.end })
            }
            "lineRange" => {
                members(&["startLine", "endLine"])?;
                let start_line = f
                    .start_line
                    .ok_or("strategy lineRange needs startLine (a line number, from 1)")?;
                Ok(Strategy::LineRange {
                    start_line,
                    end_line: f.end_line,
                })
            }
            other => Err(format!(
                "unknown strategy type {}: use default, complete, byteRange or lineRange",
                quoted(other, 40)
            )),
        }
    }
}

impl Strategy {
    fn name(self) -> &'static str {
        match self {
            Strategy::Default => "default",
            Strategy::Complete => "complete",
            Strategy::ByteRange { .. } => "byteRange",
            Strategy::LineRange { .. } => "lineRange",
        }
    }
}

fn yes() -> bool {
    true
}
fn default_limit() -> usize {
    DEFAULT_LIMIT
}
fn default_context_lines() -> usize {
    DEFAULT_CONTEXT_LINES
}

impl ReadRequest {
    /// A request for `path` with every default.
    pub fn new(path: impl Into<String>) -> ReadRequest {
        ReadRequest {
            path: path.into(),
            collapsed: true,
            name_pattern: None,
            content_pattern: None,
            matches_only: false,
            offset: 0,
            limit: DEFAULT_LIMIT,
            comments: Comments::None,
            kinds: None,
            features: None,
            context_lines: DEFAULT_CONTEXT_LINES,
            before_context: None,
            after_context: None,
            max_count: None,
            line_numbers: false,
            strategy: Strategy::Default,
            include_metadata: false,
            detail: None,
            hints: HintStyle::default(),
        }
    }
}

/// The result of the tool (docs/tool.md).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadResult {
    /// Relative to its root (never absolute); as given when the reader is not confined.
    pub path: String,
    pub mode: Mode,
    pub content: String,
    pub meta: Meta,
    /// The file's size, modification time, owner and permissions, when asked for
    /// (`include_metadata`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<FileMetadata>,
    /// A project map (mode `project`): its files in map order (docs/project.md#result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<project::MapFile>>,
    /// A project map: the files it could not show, with the guard's refusal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files_skipped: Option<Vec<project::SkippedFile>>,
    /// A project map: the budget step shown (docs/project.md#budget).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<crate::project::map::Step>,
}

/// What the file system says about the file (`include_metadata`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileMetadata {
    /// Size in bytes.
    pub size: u64,
    /// Modification time, ms since the Unix epoch.
    pub mtime_ms: u64,
    /// Owner's user id and group id.
    pub owner_uid: u32,
    pub owner_gid: u32,
    /// Permission bits as a number (`0o644` is 420).
    pub mode: u32,
    /// The same as `ls -l` shows them: `rw-r--r--`.
    pub permissions: String,
}

impl FileMetadata {
    fn of(info: &FileInfo) -> FileMetadata {
        let mut permissions = String::with_capacity(9);
        for shift in [6, 3, 0] {
            let bits = (info.mode >> shift) & 7;
            permissions.push(if bits & 4 != 0 { 'r' } else { '-' });
            permissions.push(if bits & 2 != 0 { 'w' } else { '-' });
            permissions.push(if bits & 1 != 0 { 'x' } else { '-' });
        }
        FileMetadata {
            size: info.size,
            mtime_ms: info.mtime_ms,
            owner_uid: info.uid,
            owner_gid: info.gid,
            mode: info.mode,
            permissions,
        }
    }
}

/// Facts about the file and the view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    pub total_forms: usize,
    pub expanded_forms: usize,
    pub truncated: bool,
    pub next_offset: Option<usize>,
    /// Lines in the file; `None` when not counted (a byte window does not read the
    /// whole file, nor does a whole-file view of a file over the size cap).
    pub total_lines: Option<usize>,
    pub byte_length: usize,
    pub mtime_ms: u64,
    pub diagnostics: Vec<Diagnostic>,
    /// Problems past the first 10,000 listed in `diagnostics`: counted, not listed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub diagnostics_omitted: usize,
    /// `"replace"` when the file is not valid UTF-8 and was decoded with U+FFFD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_encoding: Option<String>,
    /// The strategy as applied: a byte range as cut to character boundaries and the cap,
    /// a line range as returned.
    #[serde(default)]
    pub applied_strategy: Strategy,
    /// Bytes of the file after what was returned (`complete`, `byteRange`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remaining_bytes: Option<u64>,
    /// Lines of the file after what was returned (`default` in the raw view, `lineRange`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remaining_lines: Option<u64>,
    /// Lines cut at 2,000 characters, with the byte range that holds their rest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cut_lines: Vec<CutLine>,
    /// The grep of a text file stopped after this many matching lines (`max_count`):
    /// complete for the request; the lines after its last block were not searched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_at_max_count: Option<usize>,
    /// The file is a document (PDF, DOCX, notebook) and the views show its extracted text
    /// (docs/documents.md): its format, pages or cells, kernel language.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document: Option<DocumentInfo>,
}

/// Reads `request.path` through the guard and renders its view.
pub fn read(
    guard: &Guard,
    grammar: &Grammar,
    request: &ReadRequest,
) -> Result<ReadResult, ToolError> {
    read_cancellable(guard, grammar, request, &CancelToken::default())
}

/// [`read`] for a caller that may give up on the answer (the MCP server, when a request
/// is cancelled or the client goes away): once `cancel` is set the views stop early, so
/// the computation frees its thread, and the result is a `CANCELLED` error.
pub fn read_cancellable(
    guard: &Guard,
    grammar: &Grammar,
    request: &ReadRequest,
    cancel: &CancelToken,
) -> Result<ReadResult, ToolError> {
    read_any(guard, grammar, request, cancel).map(|r| with_closing_notes(r, grammar))
}

/// The notes said once at the end of an answer: that a map shows a path escaped
/// (docs/guard.md#how-paths-are-shown), and what the project's or the user's definer
/// tables did ([`Grammar::notes`]), for every view the grammar made: what a repository's
/// table changed in the outline is never silent (docs/reader.md#definer-table).
pub(crate) fn with_closing_notes(mut result: ReadResult, grammar: &Grammar) -> ReadResult {
    if result.mode == Mode::Project && crate::shown::has_escaped_header(&result.content) {
        push_line(&mut result.content, crate::shown::ESCAPED_PATH_NOTE);
    }
    if matches!(result.mode, Mode::LispCollapsed | Mode::Project) {
        for note in grammar.notes() {
            push_line(&mut result.content, note);
        }
    }
    result
}

/// Appends `line` on a line of its own.
fn push_line(content: &mut String, line: &str) {
    if !content.is_empty() && !content.ends_with('\n') {
        content.push('\n');
    }
    content.push_str(line);
    content.push('\n');
}

fn read_any(
    guard: &Guard,
    grammar: &Grammar,
    request: &ReadRequest,
    cancel: &CancelToken,
) -> Result<ReadResult, ToolError> {
    let mut options = view_options(request)?;
    options.cancel = cancel.clone();
    if let Some(format) = Format::of_path(&request.path) {
        return read_document(guard, grammar, request, &options, format, None);
    }
    let patterns = request.name_pattern.is_some() || request.content_pattern.is_some();
    if request.strategy == Strategy::Default
        && request.collapsed
        && !patterns
        && crate::project::plan::is_asd(&request.path)
    {
        return project::read_asd(guard, grammar, request, &options);
    }
    let mut result = match request.strategy {
        Strategy::Default => match guard.read(&request.path) {
            Ok(file) => render_file(file, grammar, &options, None),
            Err(e) if e.code == ErrorCode::SizeLimitExceeded => over_cap(guard, request, &options),
            Err(e) if e.code == ErrorCode::IsDirectory => {
                directory(guard, grammar, request, &options, e)
            }
            Err(e) => Err(e),
        },
        Strategy::Complete => read_complete(guard, &request.path),
        Strategy::ByteRange { start, end } => read_byte_range(guard, &request.path, start, end),
        Strategy::LineRange {
            start_line,
            end_line,
        } => read_line_range(guard, request, &options, start_line, end_line),
    }
    .or_else(|e| match e.code {
        // A directory with another strategy: say that the map takes the default one.
        ErrorCode::IsDirectory if request.strategy != Strategy::Default => {
            directory(guard, grammar, request, &options, e)
        }
        // A PDF under another name is still a document.
        ErrorCode::BinaryFile => sniffed_document(guard, grammar, request, &options, e),
        _ => Err(e),
    })?;
    if !request.include_metadata {
        result.metadata = None;
    }
    Ok(result)
}

/// The map of the directory a path named (docs/project.md), or the guard's refusal.
fn directory(
    guard: &Guard,
    grammar: &Grammar,
    request: &ReadRequest,
    options: &ViewOptions,
    refusal: ToolError,
) -> Result<ReadResult, ToolError> {
    match guard.directory(&request.path)? {
        Some(dir) => project::read_directory(guard, grammar, request, options, &dir),
        None => Err(refusal),
    }
}

/// Renders a file already loaded (e.g. stdin). `lisp` overrides the extension check.
/// Only the default and `complete` strategies apply to bytes already loaded.
pub fn read_loaded(
    file: LoadedFile,
    grammar: &Grammar,
    request: &ReadRequest,
    lisp: Option<bool>,
) -> Result<ReadResult, ToolError> {
    let options = view_options(request)?;
    let mut result = match request.strategy {
        Strategy::Default => render_file(file, grammar, &options, lisp),
        Strategy::Complete => Ok(complete(file)),
        other => Err(ToolError::new(
            ErrorCode::InvalidArgument,
            file.display_path.clone(),
            format!(
                "strategy {} needs a file to read from (reading {}); pass a file path, or use the default or complete strategy",
                other.name(),
                crate::guard::quoted_shown(&file.display_path)
            ),
        )),
    }?;
    if !request.include_metadata {
        result.metadata = None;
    }
    Ok(with_closing_notes(result, grammar))
}

/// The strategies other than `default` show text, not views: `mode` is `raw`.
fn window_result(
    display_path: String,
    content: String,
    byte_length: u64,
    meta: Meta,
) -> ReadResult {
    ReadResult {
        path: display_path,
        mode: Mode::Raw,
        content,
        meta: Meta {
            byte_length: usize::try_from(byte_length).unwrap_or(usize::MAX),
            ..meta
        },
        metadata: None,
        files: None,
        files_skipped: None,
        step: None,
    }
}

fn empty_meta(strategy: Strategy) -> Meta {
    Meta {
        total_forms: 0,
        expanded_forms: 0,
        truncated: false,
        next_offset: None,
        total_lines: None,
        byte_length: 0,
        mtime_ms: 0,
        diagnostics: Vec::new(),
        diagnostics_omitted: 0,
        fallback_encoding: None,
        applied_strategy: strategy,
        remaining_bytes: None,
        remaining_lines: None,
        cut_lines: Vec::new(),
        stopped_at_max_count: None,
        document: None,
    }
}

/// `complete`: the whole text (after a BOM), under the size cap.
fn read_complete(guard: &Guard, path: &str) -> Result<ReadResult, ToolError> {
    guard.read(path).map(complete)
}

fn complete(file: LoadedFile) -> ReadResult {
    let source = Source::new(&file.bytes);
    let content = source.text(0, file.bytes.len()).into_owned();
    let mut meta = empty_meta(Strategy::Complete);
    meta.total_lines = Some(source.line_count());
    meta.mtime_ms = file.mtime_ms;
    meta.remaining_bytes = Some(0);
    meta.remaining_lines = Some(0);
    meta.fallback_encoding = (!source.is_valid_utf8()).then(|| "replace".to_string());
    let metadata = file.info.as_ref().map(FileMetadata::of);
    let mut result = window_result(file.display_path, content, file.bytes.len() as u64, meta);
    result.metadata = metadata;
    result
}

/// `byteRange`: the bytes, read at their offset.
fn read_byte_range(
    guard: &Guard,
    path: &str,
    start: u64,
    end: Option<u64>,
) -> Result<ReadResult, ToolError> {
    let window = guard.read_bytes(path, start, end)?;
    Ok(byte_range_result(window, end))
}

/// The result of `byteRange` for the window read.
fn byte_range_result(window: ByteWindow, end: Option<u64>) -> ReadResult {
    let size = window.info.size;
    let asked_end = end.unwrap_or(size);
    let mut meta = empty_meta(Strategy::ByteRange {
        start: window.start,
        end: Some(window.end),
    });
    meta.mtime_ms = window.info.mtime_ms;
    meta.truncated = window.end < asked_end;
    meta.remaining_bytes = Some(size.saturating_sub(window.end));
    let content = String::from_utf8_lossy(&window.bytes);
    if matches!(content, std::borrow::Cow::Owned(_)) {
        meta.fallback_encoding = Some("replace".into());
    }
    let content = content.into_owned();
    let mut result = window_result(window.display_path, content, size, meta);
    result.metadata = Some(FileMetadata::of(&window.info));
    result
}

/// A line of a line window is kept up to this many bytes: enough for the characters the
/// views show of it.
const KEEP_PER_LINE: usize = 4 * MAX_LINE_CHARS + 4;

/// `lineRange`: the lines, found by one streaming pass.
fn read_line_range(
    guard: &Guard,
    request: &ReadRequest,
    options: &ViewOptions,
    start_line: u64,
    end_line: Option<u64>,
) -> Result<ReadResult, ToolError> {
    let count = end_line.map_or(u64::MAX, |end| end - start_line + 1);
    let window = guard.read_lines_cancellable(
        &request.path,
        LineQuery {
            first: start_line,
            count: count.min(request.limit as u64),
            keep_per_line: KEEP_PER_LINE,
            long_line_bytes: MAX_LINE_CHARS as u64,
        },
        &options.cancel,
    )?;
    line_range_result(window, options, start_line, end_line)
}

/// The result of `lineRange` for the window read, or the error of a range past the end.
fn line_range_result(
    window: LineWindow,
    options: &ViewOptions,
    start_line: u64,
    end_line: Option<u64>,
) -> Result<ReadResult, ToolError> {
    let total = window.total_lines;
    let invalid = |message: String| {
        ToolError::new(
            ErrorCode::InvalidArgument,
            window.display_path.clone(),
            format!(
                "{message} (reading {}); the valid line range is 1 to {}",
                crate::guard::quoted_shown(&window.display_path),
                total.max(1)
            ),
        )
    };
    if start_line > total.max(1) {
        return Err(invalid(format!(
            "the file has {total} lines: startLine must be at most {}, not {start_line}",
            total.max(1)
        )));
    }
    if let Some(end) = end_line.filter(|&end| end > total.max(1)) {
        return Err(invalid(format!(
            "the file has {total} lines: endLine must be at most {}, not {end}",
            total.max(1)
        )));
    }
    let view = view::render_window(&window, options, Paging::LineRange { end_line });
    let last = start_line + window.returned;
    let mut meta = empty_meta(Strategy::LineRange {
        start_line,
        end_line: (window.returned > 0).then(|| last - 1),
    });
    meta.total_lines = usize::try_from(total).ok();
    meta.mtime_ms = window.info.mtime_ms;
    meta.truncated = view.truncated;
    meta.remaining_lines = Some(total.saturating_sub(last.saturating_sub(1)));
    meta.cut_lines = view.cut_lines;
    if std::str::from_utf8(&window.text).is_err() {
        meta.fallback_encoding = Some("replace".into());
    }
    let mut result = window_result(window.display_path, view.content, window.info.size, meta);
    result.metadata = Some(FileMetadata::of(&window.info));
    Ok(result)
}

/// The default strategy on a file over the size cap: raw lines are a window read by
/// streaming; the whole-file views (collapsed, patterns) say so and name the window to
/// ask for.
fn over_cap(
    guard: &Guard,
    request: &ReadRequest,
    options: &ViewOptions,
) -> Result<ReadResult, ToolError> {
    let is_lisp = view::is_lisp_path(&request.path);
    let patterns = options.name_pattern.is_some() || options.content_pattern.is_some();
    if patterns && !is_lisp {
        return over_cap_grep::grep(guard, &request.path, options);
    }
    let whole_file_view = patterns || (is_lisp && options.collapsed);
    if !whole_file_view {
        let window = guard.read_lines_cancellable(
            &request.path,
            LineQuery {
                first: (request.offset as u64).saturating_add(1),
                count: request.limit as u64,
                keep_per_line: KEEP_PER_LINE,
                long_line_bytes: MAX_LINE_CHARS as u64,
            },
            &options.cancel,
        )?;
        let view = view::render_window(&window, options, Paging::Offset);
        let mut meta = empty_meta(Strategy::Default);
        meta.total_lines = usize::try_from(window.total_lines).ok();
        meta.mtime_ms = window.info.mtime_ms;
        meta.truncated = view.truncated;
        meta.next_offset = view.next_offset;
        meta.remaining_lines = Some(
            window
                .total_lines
                .saturating_sub((request.offset as u64).saturating_add(window.returned)),
        );
        meta.cut_lines = view.cut_lines;
        if std::str::from_utf8(&window.text).is_err() {
            meta.fallback_encoding = Some("replace".into());
        }
        let mut result = window_result(window.display_path, view.content, window.info.size, meta);
        result.metadata = Some(FileMetadata::of(&window.info));
        return Ok(result);
    }
    // The whole-file views need the whole file: a window of it is what can be read.
    let window = guard.read_bytes(&request.path, 0, Some(0))?;
    let size = window.info.size;
    let mode = if is_lisp && options.collapsed {
        Mode::LispCollapsed
    } else {
        Mode::TextFiltered
    };
    let what = if mode == Mode::LispCollapsed {
        "the collapsed view and patterns read the whole file"
    } else {
        "patterns read the whole file"
    };
    // A line window without an end reads `limit` lines at most and is valid however few
    // lines the file has; patterns do not apply to windows, so the hint drops them.
    let cap = guard.max_file_bytes();
    let hints = options.hints;
    let without = if patterns {
        format!(
            " without {} and {}",
            hints.render(&Hint::Parameter("name_pattern")),
            hints.render(&Hint::Parameter("content_pattern"))
        )
    } else {
        String::new()
    };
    let content = format!(
        "[{path} is {size} bytes, over the {cap}-byte size cap; {what}. Read it in windows{without}: {lines}, or {bytes}; or {raise}.]\n",
        path = window.display_path,
        raise = hints.render(&Hint::SizeCap),
        lines = hints.render(&Hint::LineRange { start: 1 }),
        bytes = hints.render(&Hint::ByteRange { start: 0, end: cap }),
    );
    let mut meta = empty_meta(Strategy::Default);
    meta.truncated = true;
    meta.mtime_ms = window.info.mtime_ms;
    meta.byte_length = usize::try_from(size).unwrap_or(usize::MAX);
    Ok(ReadResult {
        path: window.display_path,
        mode,
        content,
        meta,
        metadata: Some(FileMetadata::of(&window.info)),
        files: None,
        files_skipped: None,
        step: None,
    })
}

fn render_file(
    file: LoadedFile,
    grammar: &Grammar,
    options: &ViewOptions,
    lisp: Option<bool>,
) -> Result<ReadResult, ToolError> {
    if options.detail == view::Detail::Counts {
        return Err(ToolError::new(
            ErrorCode::InvalidArgument,
            file.display_path.clone(),
            format!(
                "detail counts applies to a project map (a directory, an .asd file or several paths), not to one file (reading {}); use names for one line per definition",
                crate::guard::quoted_shown(&file.display_path)
            ),
        ));
    }
    let source = Source::new(&file.bytes);
    let is_lisp = lisp.unwrap_or_else(|| view::is_lisp_path(&file.display_path));
    // Streamed: no view keeps every form of the file in memory.
    let outline =
        is_lisp.then(|| StreamedOutline::cancellable(&file.bytes, grammar, options.cancel.clone()));
    let view = match &outline {
        Some(outline) => view::render_streamed(&source, outline, options),
        None => view::render(&source, None, options),
    };
    if options.cancel.is_cancelled() {
        return Err(ToolError::new(
            ErrorCode::Cancelled,
            file.display_path.clone(),
            "the request was cancelled before its answer was ready; ask again if it is still wanted",
        ));
    }
    if let Some(e) = too_costly(options, &file.display_path) {
        return Err(e);
    }
    let total_lines = source.line_count();
    let remaining_lines = (view.mode == Mode::Raw).then(|| {
        view.next_offset
            .map_or(0, |next| total_lines.saturating_sub(next) as u64)
    });
    Ok(ReadResult {
        path: file.display_path.clone(),
        mode: view.mode,
        content: view.content,
        meta: Meta {
            total_forms: view.total_forms,
            expanded_forms: view.expanded_forms,
            truncated: view.truncated || !view.cut_lines.is_empty(),
            next_offset: view.next_offset,
            total_lines: Some(total_lines),
            byte_length: file.bytes.len(),
            mtime_ms: file.mtime_ms,
            diagnostics_omitted: outline.as_ref().map_or(0, |o| o.omitted_diagnostics),
            diagnostics: outline.map(|o| o.diagnostics).unwrap_or_default(),
            fallback_encoding: (!source.is_valid_utf8()).then(|| "replace".to_string()),
            applied_strategy: Strategy::Default,
            remaining_bytes: None,
            remaining_lines,
            cut_lines: view.cut_lines,
            stopped_at_max_count: view.stopped_at_max_count,
            document: None,
        },
        metadata: file.info.as_ref().map(FileMetadata::of),
        files: None,
        files_skipped: None,
        step: None,
    })
}

/// Checks the request's values and compiles its patterns. Every message names the path
/// (a short prefix of it: user input is never echoed whole) and says what to do next.
pub fn view_options(request: &ReadRequest) -> Result<ViewOptions, ToolError> {
    let path = crate::shown::path_prefix(&request.path);
    let invalid =
        |message: String| ToolError::new(ErrorCode::InvalidArgument, path.clone(), message);
    if request.path.is_empty() {
        return Err(invalid(
            "empty path; pass the path of a file to read".into(),
        ));
    }
    let reading = crate::guard::quoted_path(&request.path, 80);
    if request.limit == 0 {
        return Err(invalid(format!(
            "limit must be at least 1 (reading {reading}); omit it for the default of {DEFAULT_LIMIT} lines"
        )));
    }
    check_strategy(request, &reading).map_err(invalid)?;
    if request.max_count == Some(0) {
        return Err(invalid(format!(
            "max_count must be at least 1 (reading {reading}); omit it to show every match"
        )));
    }
    // Both patterns are also literal text (docs/views.md#expanded-forms); `name_pattern`
    // is case-insensitive, `content_pattern` case-sensitive.
    let compile = |name: &str, text: &Option<String>, by_name: bool| {
        let Some(text) = text else { return Ok(None) };
        let compiled = Pattern::regex_or_literal(text, by_name);
        compiled
            .map(Some)
            .map_err(|e| invalid(match e {
                PatternError::TooLong(n) => format!(
                    "{name} is {n} bytes, over the limit of {MAX_PATTERN_BYTES} (reading {reading}); use a shorter pattern"
                ),
                PatternError::Invalid(why) => format!(
                    "invalid {name} {} (reading {reading}): {why}; patterns use Rust regex syntax (no backreferences or lookaround) and must compile to at most {COMPILED_SIZE_LIMIT} bytes",
                    quoted(text, 80)
                ),
            }))
    };
    Ok(ViewOptions {
        collapsed: request.collapsed,
        name_pattern: compile("name_pattern", &request.name_pattern, true)?,
        content_pattern: compile("content_pattern", &request.content_pattern, false)?,
        offset: request.offset,
        limit: request.limit,
        comments: request.comments,
        kinds: request.kinds.as_ref().map(view::Kinds::new),
        features: request.features.as_ref().map(view::FeatureList::new),
        context_lines: request.context_lines,
        before_context: request.before_context,
        after_context: request.after_context,
        max_count: request.max_count,
        line_numbers: request.line_numbers,
        cancel: CancelToken::default(),
        detail: if request.matches_only {
            view::Detail::Matches
        } else {
            request.detail.unwrap_or(view::Detail::Full)
        },
        hints: request.hints,
    })
}

/// The strategy's own bounds, and the parameters that only the default strategy takes.
fn check_strategy(request: &ReadRequest, reading: &str) -> Result<(), String> {
    let no_kind = |kinds: &Vec<String>| kinds.iter().all(|k| k.trim().is_empty());
    if request.kinds.as_ref().is_some_and(no_kind) {
        return Err(format!(
            "kinds is empty (reading {reading}): give at least one operator, e.g. [\"defun\"], or leave kinds out"
        ));
    }
    let patterns = request.name_pattern.is_some() || request.content_pattern.is_some();
    match request.detail {
        Some(view::Detail::Matches) => {
            return Err(format!(
                "detail matches is not a detail to ask for (reading {reading}); give name_pattern or content_pattern with matches_only, or use full, no-docstrings, names or counts"
            ))
        }
        Some(_) if patterns || !request.collapsed || request.strategy != Strategy::Default => {
            return Err(format!(
                "detail applies to the collapsed outline without patterns (reading {reading}); drop detail, or the patterns, collapsed=false and strategy"
            ))
        }
        _ => {}
    }
    if request.matches_only && !patterns {
        return Err(format!(
            "matches_only needs name_pattern or content_pattern (reading {reading}); give a pattern, or leave matches_only out"
        ));
    }
    let strategy = request.strategy;
    if strategy == Strategy::Default {
        return Ok(());
    }
    let name = strategy.name();
    if request.name_pattern.is_some() || request.content_pattern.is_some() {
        return Err(format!(
            "name_pattern and content_pattern apply to the default strategy, not to {name} (reading {reading}); drop them, or the strategy"
        ));
    }
    if request.kinds.is_some() || request.features.is_some() {
        return Err(format!(
            "kinds and features apply to the default strategy, not to {name} (reading {reading}); drop them, or the strategy"
        ));
    }
    if request.offset != 0 {
        return Err(format!(
            "offset applies to the default strategy, not to {name} (reading {reading}); use {{\"type\":\"lineRange\",\"startLine\":N}} to start at line N"
        ));
    }
    match strategy {
        Strategy::ByteRange {
            start,
            end: Some(end),
        } if end < start => Err(format!(
            "byteRange end ({end}) must be at least its start ({start}) (reading {reading}); end is exclusive, or omit it to read to the end of the file"
        )),
        Strategy::LineRange { start_line: 0, .. } => Err(format!(
            "lineRange startLine must be at least 1 (reading {reading}); lines are numbered from 1"
        )),
        Strategy::LineRange {
            start_line,
            end_line: Some(end),
        } if end < start_line => Err(format!(
            "lineRange endLine ({end}) must be at least its startLine ({start_line}) (reading {reading}); endLine is inclusive, or omit it to read to the end of the file"
        )),
        _ => Ok(()),
    }
}

/// The error when a pattern spent its matching budget on this file.
fn too_costly(options: &ViewOptions, display_path: &str) -> Option<ToolError> {
    let (name, pattern) = [
        ("name_pattern", &options.name_pattern),
        ("content_pattern", &options.content_pattern),
    ]
    .into_iter()
    .find_map(|(name, p)| p.as_ref().filter(|p| p.too_costly()).map(|p| (name, p)))?;
    Some(ToolError::new(
        ErrorCode::InvalidArgument,
        display_path,
        format!(
            "{name} {} is too costly to match on {}; simplify it (fewer or smaller counted repetitions, less nesting), or read the file without it",
            pattern.quoted(),
            crate::guard::quoted_shown(display_path)
        ),
    ))
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_refusal_names_the_path_and_what_to_do() {
        let refused = |edit: fn(&mut ReadRequest)| {
            let mut request = ReadRequest::new("dir/a.lisp");
            edit(&mut request);
            let e = view_options(&request).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArgument);
            assert_eq!(e.path, "dir/a.lisp");
            e.message
        };
        for message in [
            refused(|r| r.limit = 0),
            refused(|r| r.matches_only = true),
            refused(|r| r.name_pattern = Some(r"\w{5000}".into())),
            refused(|r| r.content_pattern = Some("x".repeat(MAX_PATTERN_BYTES + 1))),
            refused(|r| r.content_pattern = Some(r"\w{5000}".into())),
        ] {
            assert!(message.contains("(reading \"dir/a.lisp\")"), "{message}");
            assert!(message.contains("; "), "says what to do next: {message}");
            assert!(message.len() < 1000, "{message}");
        }
        // A path of megabytes is not echoed whole.
        let mut request = ReadRequest::new("p".repeat(1 << 20));
        request.limit = 0;
        let e = view_options(&request).unwrap_err();
        assert!(e.path.len() < 5000 && e.message.len() < 1000);
    }
}
