//! The `lisp-read-file` tool as a library call (SPEC §6): one request type, one result
//! type, both serde types whose JSON is the tool's public contract. The CLI and the MCP
//! server are thin surfaces over [`read`].

pub mod compat;
pub mod read_envelope;
pub mod read_file;

use crate::error::{ErrorCode, ToolError};
use crate::grammar::Grammar;
use crate::guard::{Guard, LoadedFile};
use crate::outline::StreamedOutline;
use crate::scan::Diagnostic;
use crate::source::Source;
use crate::view::{self, Comments, Mode, Pattern, ViewOptions};
use regex::RegexBuilder;
use serde::{Deserialize, Serialize};

/// Default `limit`: lines of any view.
pub const DEFAULT_LIMIT: usize = 2000;
/// Default `context_lines` of the text-filtered view.
pub const DEFAULT_CONTEXT_LINES: usize = 5;

/// The parameters of the `lisp-read-file` tool (SPEC §6).
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
    /// Expand forms whose text matches; grep for text files (Rust regex).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_pattern: Option<String>,
    /// 0-based first line.
    #[serde(default)]
    pub offset: usize,
    /// Maximum lines returned (at least 1).
    #[serde(default = "default_limit")]
    pub limit: usize,
    /// Top-level comments in the collapsed view.
    #[serde(default)]
    pub comments: Comments,
    /// Context lines around matches in text-filtered mode.
    #[serde(default = "default_context_lines")]
    pub context_lines: usize,
    /// Number lines in raw mode.
    #[serde(default)]
    pub line_numbers: bool,
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
            offset: 0,
            limit: DEFAULT_LIMIT,
            comments: Comments::None,
            context_lines: DEFAULT_CONTEXT_LINES,
            line_numbers: false,
        }
    }
}

/// The result of the tool (SPEC §6).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadResult {
    /// Relative to its root (never absolute); as given when the reader is not confined.
    pub path: String,
    pub mode: Mode,
    pub content: String,
    pub meta: Meta,
}

/// Facts about the file and the view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    pub total_forms: usize,
    pub expanded_forms: usize,
    pub truncated: bool,
    pub next_offset: Option<usize>,
    pub total_lines: usize,
    pub byte_length: usize,
    pub mtime_ms: u64,
    pub diagnostics: Vec<Diagnostic>,
    /// `"replace"` when the file is not valid UTF-8 and was decoded with U+FFFD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_encoding: Option<String>,
}

/// Reads `request.path` through the guard and renders its view.
pub fn read(
    guard: &Guard,
    grammar: &Grammar,
    request: &ReadRequest,
) -> Result<ReadResult, ToolError> {
    let options = view_options(request)?;
    let file = guard.read(&request.path)?;
    Ok(render_file(file, grammar, &options, None))
}

/// Renders a file already loaded (e.g. stdin). `lisp` overrides the extension check.
pub fn read_loaded(
    file: LoadedFile,
    grammar: &Grammar,
    request: &ReadRequest,
    lisp: Option<bool>,
) -> Result<ReadResult, ToolError> {
    let options = view_options(request)?;
    Ok(render_file(file, grammar, &options, lisp))
}

fn render_file(
    file: LoadedFile,
    grammar: &Grammar,
    options: &ViewOptions,
    lisp: Option<bool>,
) -> ReadResult {
    let source = Source::new(&file.bytes);
    let is_lisp = lisp.unwrap_or_else(|| view::is_lisp_path(&file.display_path));
    // Streamed: no view keeps every form of the file in memory.
    let outline = is_lisp.then(|| StreamedOutline::new(&file.bytes, grammar));
    let view = match &outline {
        Some(outline) => view::render_streamed(&source, outline, options),
        None => view::render(&source, None, options),
    };
    ReadResult {
        path: file.display_path.clone(),
        mode: view.mode,
        content: view.content,
        meta: Meta {
            total_forms: view.total_forms,
            expanded_forms: view.expanded_forms,
            truncated: view.truncated,
            next_offset: view.next_offset,
            total_lines: source.line_count(),
            byte_length: file.bytes.len(),
            mtime_ms: file.mtime_ms,
            diagnostics: outline.map(|o| o.diagnostics).unwrap_or_default(),
            fallback_encoding: (!source.is_valid_utf8()).then(|| "replace".to_string()),
        },
    }
}

/// Checks the request's values and compiles its patterns.
pub fn view_options(request: &ReadRequest) -> Result<ViewOptions, ToolError> {
    let invalid =
        |message: String| ToolError::new(ErrorCode::InvalidArgument, request.path.clone(), message);
    if request.path.is_empty() {
        return Err(invalid(
            "empty path; pass the path of a file to read".into(),
        ));
    }
    if request.limit == 0 {
        return Err(invalid(
            "limit must be at least 1; omit it for the default of 2000 lines".into(),
        ));
    }
    let compile = |name: &str,
                   text: &Option<String>,
                   case_insensitive: bool|
     -> Result<Option<Pattern>, ToolError> {
        let Some(text) = text else { return Ok(None) };
        RegexBuilder::new(text)
            .case_insensitive(case_insensitive)
            .size_limit(1 << 22)
            .build()
            .map(|regex| Some(Pattern { text: text.clone(), regex }))
            .map_err(|e| {
                invalid(format!(
                    "invalid {name} {text:?}: {}; patterns use Rust regex syntax (no backreferences or lookaround)",
                    e.to_string().split_whitespace().collect::<Vec<_>>().join(" ")
                ))
            })
    };
    Ok(ViewOptions {
        collapsed: request.collapsed,
        name_pattern: compile("name_pattern", &request.name_pattern, true)?,
        content_pattern: compile("content_pattern", &request.content_pattern, false)?,
        offset: request.offset,
        limit: request.limit,
        comments: request.comments,
        context_lines: request.context_lines,
        line_numbers: request.line_numbers,
    })
}
