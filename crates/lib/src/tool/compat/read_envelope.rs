//! The `Read` tool (docs/mcp.md#compatibility-tools): the standard envelope of a common agent tool,
//! kept verbatim for compatibility (docs/mcp.md#read)
//! (`status`, `data`, `text`, `stats`, `context`, and `error` when `status` is `error`),
//! lines formatted `"%4d | %s\n"`, over the one guard and line window.

use super::{
    echoed_arguments, integer_argument, path_argument, read_window, shown_path, unknown_arguments,
    WindowText,
};
use crate::cancel::CancelToken;
use crate::error::{ErrorCode, ToolError};
use crate::guard::Guard;
use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt::Write as _;
use std::time::Instant;

pub const NAME: &str = "Read";
/// The published description, kept verbatim for compatibility.
pub const DESCRIPTION: &str =
    "Reads a file from the local filesystem with line numbers. Optimized for code editing.";
/// The compatibility definition's `parameters` (kept verbatim for compatibility), verbatim.
pub const INPUT_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "path": {
      "type": "string",
      "description": "Path to the file (relative to project root). Required."
    },
    "start_line": {
      "type": "integer",
      "description": "The line number to start reading from (1-based). Default is 1.",
      "default": 1
    },
    "limit": {
      "type": "integer",
      "description": "The maximum number of lines to read. Default is 500. Hard limit is 2000.",
      "default": 500
    }
  },
  "required": ["path"]
}"#;
/// The envelope (kept for compatibility): the same shape for success, partial and error.
pub const OUTPUT_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "status": {"type": "string", "enum": ["success", "partial", "error"]},
    "data": {
      "type": ["object", "null"],
      "properties": {
        "content": {"type": "string", "description": "Lines formatted \"%4d | %s\\n\"."},
        "truncated": {"type": "boolean"},
        "fallback_encoding": {"type": "string", "enum": ["replace"]}
      },
      "required": ["content", "truncated"],
      "additionalProperties": false
    },
    "text": {"type": "string"},
    "stats": {
      "type": "object",
      "properties": {
        "time_ms": {"type": "integer", "minimum": 0},
        "lines_read": {"type": "integer", "minimum": 0},
        "chars_read": {"type": "integer", "minimum": 0},
        "total_lines": {"type": "integer", "minimum": 0},
        "file_size_bytes": {"type": "integer", "minimum": 0},
        "file_mtime_ms": {"type": "integer", "minimum": 0},
        "encoding": {"type": "string"}
      },
      "required": ["time_ms"],
      "additionalProperties": false
    },
    "context": {
      "type": "object",
      "properties": {
        "cwd": {"type": "string"},
        "params_input": {"type": "object"},
        "path_resolved": {"type": "string"}
      },
      "required": ["cwd", "params_input"],
      "additionalProperties": false
    },
    "error": {
      "type": "object",
      "properties": {
        "code": {"type": "string", "enum": ["NOT_FOUND", "ACCESS_DENIED", "IS_DIRECTORY", "BINARY_FILE", "INVALID_PARAM", "NOT_FILE", "SIZE_LIMIT_EXCEEDED", "INTERNAL"]},
        "message": {"type": "string"}
      },
      "required": ["code", "message"],
      "additionalProperties": false
    }
  },
  "required": ["status", "data", "text", "stats", "context"],
  "additionalProperties": false
}"#;

pub const DEFAULT_LIMIT: usize = 500;
pub const MAX_LIMIT: usize = 2000;

/// The envelope. `error` is present exactly when `status` is `error`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Envelope {
    pub status: Status,
    pub data: Option<Data>,
    pub text: String,
    pub stats: Stats,
    pub context: Context,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<EnvelopeError>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Success,
    Partial,
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Data {
    pub content: String,
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback_encoding: Option<&'static str>,
}

/// Only `time_ms` on an error (nothing was read).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stats {
    pub time_ms: u64,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub read: Option<ReadStats>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadStats {
    pub lines_read: usize,
    pub chars_read: usize,
    pub total_lines: usize,
    pub file_size_bytes: usize,
    pub file_mtime_ms: u64,
    pub encoding: &'static str,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Context {
    /// Relative to the project root: always `.` (the server does not change directory).
    pub cwd: &'static str,
    /// The arguments as the caller sent them.
    pub params_input: Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_resolved: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvelopeError {
    pub code: &'static str,
    pub message: String,
}

impl Envelope {
    pub fn is_error(&self) -> bool {
        self.status == Status::Error
    }

    /// The text an agent reads: the numbered lines, then the summary.
    pub fn view_text(&self) -> String {
        match &self.data {
            Some(data) if !data.content.is_empty() => format!("{}\n{}", data.content, self.text),
            _ => self.text.clone(),
        }
    }
}

/// Runs the tool on its JSON arguments; every failure is an envelope with `status: error`.
/// `cancel` is polled while a file over the size cap is scanned (`CANCELLED` once set).
pub fn read(guard: &Guard, arguments: &Map<String, Value>, cancel: &CancelToken) -> Envelope {
    let started = Instant::now();
    let fail = |code: &'static str, message: String, path_resolved: Option<String>| {
        error_envelope(arguments, code, message, elapsed_ms(started), path_resolved)
    };
    let (path, start_line, limit) = match checked_arguments(arguments) {
        Ok(checked) => checked,
        Err(message) => return fail("INVALID_PARAM", message, None),
    };
    let read = match read_window(guard, &path, start_line, limit, cancel) {
        Ok(read) => read,
        Err(e) => {
            let (code, message) = seed_error(&path, e);
            return fail(code, message, None);
        }
    };
    let total = read.window.total;
    // Kept for compatibility (docs/mcp.md): past the end is an error; an empty file accepts start_line 1 only.
    if start_line > total.max(1) {
        let message = past_the_end(start_line, &read.display_path, total);
        return fail("INVALID_PARAM", message, Some(read.display_path));
    }
    success(arguments, &read, elapsed_ms(started))
}

/// `path`, `start_line` and `limit`, checked; unknown arguments refused.
fn checked_arguments(arguments: &Map<String, Value>) -> Result<(String, usize, usize), String> {
    unknown_arguments(arguments, NAME, &["path", "start_line", "limit"])?;
    let path = path_argument(arguments)?;
    let start_line = integer_argument(arguments, &path, "start_line", 1, 1, usize::MAX)?;
    let limit = integer_argument(arguments, &path, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)?;
    Ok((path, start_line, limit))
}

fn past_the_end(start_line: usize, shown: &str, total: usize) -> String {
    if total == 0 {
        format!("Invalid start_line {start_line}: '{shown}' is empty; use start_line=1.")
    } else {
        format!(
            "Invalid start_line {start_line}: '{shown}' has {total} lines; use a start_line from 1 to {total}."
        )
    }
}

/// The envelope of a window read: `partial` when cut or decoded with replacements.
fn success(arguments: &Map<String, Value>, read: &WindowText, time_ms: u64) -> Envelope {
    let window = &read.window;
    let mut content = String::new();
    let mut chars_read = 0;
    for (index, line) in window.lines.clone().zip(&read.lines) {
        chars_read += line.chars().count() + 1;
        let _ = writeln!(content, "{:4} | {}", index + 1, line);
    }
    let fallback_encoding = (!read.valid_utf8).then_some("replace");
    let truncated = window.truncated();
    Envelope {
        status: if truncated || fallback_encoding.is_some() {
            Status::Partial
        } else {
            Status::Success
        },
        data: Some(Data {
            content,
            truncated,
            fallback_encoding,
        }),
        text: summary(read, time_ms),
        stats: Stats {
            time_ms,
            read: Some(ReadStats {
                lines_read: window.lines.len(),
                chars_read,
                total_lines: window.total,
                file_size_bytes: read.byte_length,
                file_mtime_ms: read.mtime_ms,
                encoding: if fallback_encoding.is_some() {
                    "utf-8 (replace)"
                } else {
                    "utf-8"
                },
            }),
        },
        context: Context {
            cwd: ".",
            params_input: echoed_arguments(arguments),
            path_resolved: Some(read.display_path.clone()),
        },
        error: None,
    }
}

/// The envelope's `text`: what was read, how to continue, the encoding note.
fn summary(read: &WindowText, time_ms: u64) -> String {
    let shown = &read.display_path;
    let window = &read.window;
    let total = window.total;
    let (first, last) = window.first_and_last();
    let lines_read = window.lines.len();
    let mut text = if total == 0 {
        format!("Read 0 lines from '{shown}' (file is empty).")
    } else {
        format!(
            "Read {lines_read} lines from '{shown}' (Lines {first}-{last}).\n(Took {time_ms}ms)"
        )
    };
    if let Some(next) = window.next_start_line() {
        let showing = if first == 1 {
            format!("first {lines_read}")
        } else {
            format!("lines {first}-{last}")
        };
        let _ = write!(
            text,
            "\n[Truncated: Showing {showing} of {total} lines. Use start_line={next} to continue.]"
        );
    }
    if !read.valid_utf8 {
        text.push_str(
            "\n[Encoding: the file is not valid UTF-8; invalid bytes were replaced with U+FFFD.]",
        );
    }
    if let Some(cut) = read.cut_line {
        text.push('\n');
        text.push_str(&super::cut_line_note(cut));
    }
    text
}

/// An error envelope for a call refused before the file was looked at.
pub fn refused(arguments: &Map<String, Value>, code: ErrorCode, message: String) -> Envelope {
    error_envelope(arguments, code.as_str(), message, 0, None)
}

/// The envelope of every failure: no data, the message as text and as `error`.
fn error_envelope(
    arguments: &Map<String, Value>,
    code: &'static str,
    message: String,
    time_ms: u64,
    path_resolved: Option<String>,
) -> Envelope {
    Envelope {
        status: Status::Error,
        data: None,
        text: format!("Error: {message}"),
        stats: Stats {
            time_ms,
            read: None,
        },
        context: Context {
            cwd: ".",
            params_input: echoed_arguments(arguments),
            path_resolved,
        },
        error: Some(EnvelopeError { code, message }),
    }
}

fn elapsed_ms(started: Instant) -> u64 {
    started.elapsed().as_millis() as u64
}

/// The compatibility definition's codes and messages (kept verbatim for compatibility); the guard's message says what to do next.
fn seed_error(path: &str, e: ToolError) -> (&'static str, String) {
    let path = shown_path(path);
    let lead = match e.code {
        ErrorCode::NotFound => format!("File '{path}' does not exist."),
        ErrorCode::AccessDenied => "Access denied. Path must be within project root.".to_string(),
        ErrorCode::IsDirectory => format!("Path '{path}' is a directory. Use LS to explore it."),
        ErrorCode::BinaryFile => format!("File '{path}' appears to be binary."),
        _ => String::new(),
    };
    let code = match e.code {
        ErrorCode::InvalidArgument => "INVALID_PARAM",
        other => other.as_str(),
    };
    let message = if lead.is_empty() {
        e.message
    } else {
        format!("{lead} ({})", e.message)
    };
    (code, message)
}
