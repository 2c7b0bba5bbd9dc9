//! The `lisp-read-file` tool as a library call (docs/tool.md): one request type, one result
//! type, both serde types whose JSON is the tool's public contract. The CLI and the MCP
//! server are thin surfaces over [`read`].

pub mod compat;
pub mod read_envelope;
pub mod read_file;

use crate::cancel::CancelToken;
use crate::error::{ErrorCode, ToolError};
use crate::grammar::Grammar;
use crate::guard::{Guard, LoadedFile};
use crate::outline::StreamedOutline;
use crate::pattern::{quote_prefix, PatternError, COMPILED_SIZE_LIMIT, MAX_PATTERN_BYTES};
use crate::scan::Diagnostic;
use crate::source::Source;
use crate::view::{self, Comments, Mode, Pattern, ViewOptions};
use serde::{Deserialize, Serialize};

/// Default `limit`: lines of any view.
pub const DEFAULT_LIMIT: usize = 2000;
/// Default `context_lines` of the text-filtered view.
pub const DEFAULT_CONTEXT_LINES: usize = 5;

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

/// The result of the tool (docs/tool.md).
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
    /// Problems past the first 10,000 listed in `diagnostics`: counted, not listed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub diagnostics_omitted: usize,
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
    let mut options = view_options(request)?;
    options.cancel = cancel.clone();
    let file = guard.read(&request.path)?;
    render_file(file, grammar, &options, None)
}

/// Renders a file already loaded (e.g. stdin). `lisp` overrides the extension check.
pub fn read_loaded(
    file: LoadedFile,
    grammar: &Grammar,
    request: &ReadRequest,
    lisp: Option<bool>,
) -> Result<ReadResult, ToolError> {
    let options = view_options(request)?;
    render_file(file, grammar, &options, lisp)
}

fn render_file(
    file: LoadedFile,
    grammar: &Grammar,
    options: &ViewOptions,
    lisp: Option<bool>,
) -> Result<ReadResult, ToolError> {
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
    Ok(ReadResult {
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
            diagnostics_omitted: outline.as_ref().map_or(0, |o| o.omitted_diagnostics),
            diagnostics: outline.map(|o| o.diagnostics).unwrap_or_default(),
            fallback_encoding: (!source.is_valid_utf8()).then(|| "replace".to_string()),
        },
    })
}

/// Checks the request's values and compiles its patterns. Every message names the path
/// (a short prefix of it: user input is never echoed whole) and says what to do next.
pub fn view_options(request: &ReadRequest) -> Result<ViewOptions, ToolError> {
    let path = compat::shown_path(&request.path);
    let invalid =
        |message: String| ToolError::new(ErrorCode::InvalidArgument, path.clone(), message);
    if request.path.is_empty() {
        return Err(invalid(
            "empty path; pass the path of a file to read".into(),
        ));
    }
    let reading = quote_prefix(&request.path, 80);
    if request.limit == 0 {
        return Err(invalid(format!(
            "limit must be at least 1 (reading {reading}); omit it for the default of {DEFAULT_LIMIT} lines"
        )));
    }
    // `name_pattern` is also literal text (docs/views.md#expanded-forms), case-insensitive.
    let compile = |name: &str, text: &Option<String>, by_name: bool| {
        let Some(text) = text else { return Ok(None) };
        let compiled = if by_name {
            Pattern::regex_or_literal(text, true)
        } else {
            Pattern::new(text, false)
        };
        compiled
            .map(Some)
            .map_err(|e| invalid(match e {
                PatternError::TooLong(n) => format!(
                    "{name} is {n} bytes, over the limit of {MAX_PATTERN_BYTES} (reading {reading}); use a shorter pattern"
                ),
                PatternError::Invalid(why) => format!(
                    "invalid {name} {} (reading {reading}): {why}; patterns use Rust regex syntax (no backreferences or lookaround) and must compile to at most {COMPILED_SIZE_LIMIT} bytes",
                    quote_prefix(text, 80)
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
        context_lines: request.context_lines,
        line_numbers: request.line_numbers,
        cancel: CancelToken::default(),
    })
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
            quote_prefix(display_path, 80)
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
            refused(|r| r.content_pattern = Some("(".into())),
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
