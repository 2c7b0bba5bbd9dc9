//! The `read_file` tool (docs/mcp.md#compatibility-tools): exactly the published contract of a
//! common agent tool, kept verbatim for compatibility — its definition text, defaults, bounds, output and
//! error names — over the one guard and line window.

use super::{
    integer_argument, path_argument, read_window, shown_path, unknown_arguments, CompatError,
};
use crate::cancel::CancelToken;
use crate::error::{ErrorCode, ToolError};
use crate::guard::Guard;
use serde::Serialize;
use serde_json::{Map, Value};

pub const NAME: &str = "read_file";
/// The published description, kept verbatim for compatibility.
pub const DESCRIPTION: &str =
    "Reads a UTF-8 text file in the workspace and returns a line-limited content window.";
/// The published `parameters`, kept verbatim for compatibility.
pub const INPUT_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "path": {
      "type": "string",
      "description": "Workspace-root-relative file path to read (e.g., \"src/main.ts\")."
    },
    "start_line": {
      "type": "number",
      "default": 1,
      "description": "1-based start line of the returned window (default: 1)."
    },
    "max_lines": {
      "type": "number",
      "default": 200,
      "description": "Maximum number of lines to return (default: 200)."
    }
  },
  "required": ["path"]
}"#;
/// The compatibility definition's `ReadFileOutput` (kept verbatim for compatibility), plus `fallback_encoding` when the file is not
/// valid UTF-8 (docs/decisions.md: replace, and report it).
pub const OUTPUT_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Workspace-root-relative path."},
    "content": {"type": "string", "description": "The lines of the window, each ending in \n (CRLF normalized)."},
    "truncated": {"type": "boolean", "description": "True when lines follow the window."},
    "next_start_line": {"type": ["integer", "null"], "minimum": 1, "description": "start_line that continues the window, or null."},
    "meta": {
      "type": "object",
      "properties": {
        "byte_length": {"type": "integer", "minimum": 0},
        "line_count": {"type": "integer", "minimum": 0},
        "returned_line_count": {"type": "integer", "minimum": 0},
        "mtime_ms": {"type": "integer", "minimum": 0},
        "fallback_encoding": {"type": "string", "enum": ["replace"]}
      },
      "required": ["byte_length", "line_count", "returned_line_count", "mtime_ms"],
      "additionalProperties": false
    }
  },
  "required": ["path", "content", "truncated", "next_start_line", "meta"],
  "additionalProperties": false
}"#;

pub const DEFAULT_MAX_LINES: usize = 200;
/// The arguments of the published schema: any other is refused.
const ACCEPTED: [&str; 3] = ["path", "start_line", "max_lines"];
pub const MAX_MAX_LINES: usize = 500;

/// The arguments, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadFileRequest {
    pub path: String,
    /// 1-based.
    pub start_line: usize,
    pub max_lines: usize,
}

impl ReadFileRequest {
    /// Reads the tool's JSON arguments; out-of-range numbers are `INVALID_ARGUMENT`.
    pub fn from_arguments(arguments: &Map<String, Value>) -> Result<ReadFileRequest, CompatError> {
        let shown = match arguments.get("path") {
            Some(Value::String(path)) => shown_path(path),
            _ => String::new(),
        };
        let invalid = |message: String| CompatError {
            code: "INVALID_ARGUMENT",
            path: shown.clone(),
            message,
        };
        unknown_arguments(arguments, NAME, &ACCEPTED).map_err(invalid)?;
        let path = path_argument(arguments).map_err(invalid)?;
        Ok(ReadFileRequest {
            start_line: integer_argument(arguments, &path, "start_line", 1, 1, usize::MAX)
                .map_err(invalid)?,
            max_lines: integer_argument(
                arguments,
                &path,
                "max_lines",
                DEFAULT_MAX_LINES,
                1,
                MAX_MAX_LINES,
            )
            .map_err(invalid)?,
            path,
        })
    }
}

/// The compatibility definition's `ReadFileOutput`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadFileOutput {
    pub path: String,
    pub content: String,
    pub truncated: bool,
    pub next_start_line: Option<usize>,
    pub meta: ReadFileMeta,
    /// The window's one line when the size cap cut it: its number and the bytes of the
    /// file holding its rest (said in the text; the published output has no place for it).
    #[serde(skip)]
    pub cut_line: Option<(usize, u64, u64)>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadFileMeta {
    pub byte_length: usize,
    pub line_count: usize,
    pub returned_line_count: usize,
    pub mtime_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback_encoding: Option<&'static str>,
}

/// Reads the window. A `start_line` past the end is not an error: empty content, as the published definition says (docs/mcp.md#read_file).
/// `cancel` is polled while a file over the size cap is scanned (`CANCELLED` once set).
pub fn read_file(
    guard: &Guard,
    request: &ReadFileRequest,
    cancel: &CancelToken,
) -> Result<ReadFileOutput, CompatError> {
    let read = read_window(
        guard,
        &request.path,
        request.start_line,
        request.max_lines,
        cancel,
    )
    .map_err(seed_error)?;
    let window = &read.window;
    let mut content = String::new();
    for (index, line) in window.lines.clone().zip(&read.lines) {
        content.push_str(line);
        if index + 1 < window.total || !read.ends_without_newline {
            content.push('\n');
        }
    }
    Ok(ReadFileOutput {
        path: read.display_path.clone(),
        content,
        truncated: window.truncated() || read.cut_line.is_some(),
        next_start_line: window.next_start_line(),
        cut_line: read.cut_line,
        meta: ReadFileMeta {
            byte_length: read.byte_length,
            line_count: window.total,
            returned_line_count: window.lines.len(),
            mtime_ms: read.mtime_ms,
            fallback_encoding: (!read.valid_utf8).then_some("replace"),
        },
    })
}

/// The codes of the compatibility definition's error object (kept verbatim for
/// compatibility), as the error mapping of this tool names them.
pub const ERROR_CODES: [&str; 7] = [
    "INVALID_ARGUMENT",
    "NOT_FOUND",
    "NOT_FILE",
    "ACCESS_DENIED",
    "BINARY_NOT_SUPPORTED",
    "SIZE_LIMIT_EXCEEDED",
    "INTERNAL",
];

/// The compatibility definition's error names (kept verbatim for compatibility): binary is `BINARY_NOT_SUPPORTED`, a directory or a
/// special file is `NOT_FILE`; a path outside the workspace keeps `ACCESS_DENIED`.
fn seed_error(e: ToolError) -> CompatError {
    let code = match e.code {
        ErrorCode::BinaryFile => "BINARY_NOT_SUPPORTED",
        ErrorCode::IsDirectory | ErrorCode::NotFile => "NOT_FILE",
        other => other.as_str(),
    };
    CompatError {
        code,
        path: e.path,
        message: e.message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_definition_is_the_seeds() {
        let schema: Value = serde_json::from_str(INPUT_SCHEMA).unwrap();
        assert_eq!(schema["required"], serde_json::json!(["path"]));
        assert_eq!(schema["properties"]["max_lines"]["default"], 200);
        assert_eq!(schema["properties"]["start_line"]["type"], "number");
        let output: Value = serde_json::from_str(OUTPUT_SCHEMA).unwrap();
        assert_eq!(output["type"], "object");
    }

    #[test]
    fn arguments_and_their_bounds() {
        let args = |s: &str| serde_json::from_str::<Map<String, Value>>(s).unwrap();
        let r = ReadFileRequest::from_arguments(&args(r#"{"path": "a"}"#)).unwrap();
        assert_eq!((r.start_line, r.max_lines), (1, 200));
        for bad in [
            r#"{"path": "a", "max_lines": 501}"#,
            r#"{"path": "a", "max_lines": 0}"#,
            r#"{"path": "a", "start_line": 0}"#,
            r#"{"path": "a", "start_line": "2"}"#,
            r#"{"path": ""}"#,
            r#"{"path": 7}"#,
            r#"{"path": "a", "start_line": 5, "end_line": 6}"#,
            r#"{"path": "a", "maxLines": 6}"#,
            r#"{"path": "a", "strategy": {"type": "complete"}}"#,
        ] {
            let e = ReadFileRequest::from_arguments(&args(bad)).unwrap_err();
            assert_eq!(e.code, "INVALID_ARGUMENT", "{bad}");
        }
        let r = ReadFileRequest::from_arguments(&args(r#"{"path": "a", "max_lines": 500}"#));
        assert_eq!(r.unwrap().max_lines, 500);
    }

    #[test]
    fn error_names_follow_the_seed() {
        let e = |code| seed_error(ToolError::new(code, "p", "m")).code;
        assert_eq!(e(ErrorCode::BinaryFile), "BINARY_NOT_SUPPORTED");
        assert_eq!(e(ErrorCode::IsDirectory), "NOT_FILE");
        assert_eq!(e(ErrorCode::NotFile), "NOT_FILE");
        assert_eq!(e(ErrorCode::AccessDenied), "ACCESS_DENIED");
        assert_eq!(e(ErrorCode::SizeLimitExceeded), "SIZE_LIMIT_EXCEEDED");
    }
}
