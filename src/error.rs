//! The error every surface reports: a stable code, the path as the user should see it
//! (never an absolute path inside a root), and a message that says what to do next.

use serde::Serialize;
use std::fmt;

/// Stable error codes (docs/errors.md). Serialized in SCREAMING_SNAKE_CASE, e.g. `NOT_FOUND`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    InvalidArgument,
    NotFound,
    IsDirectory,
    NotFile,
    AccessDenied,
    BinaryFile,
    SizeLimitExceeded,
    /// A PDF, DOCX file or notebook that cannot be read: damaged, encrypted, over a
    /// document limit, or a build without document support (docs/documents.md).
    UnsupportedDocument,
    /// The caller gave up on the request before its answer was ready (MCP cancellation).
    Cancelled,
    Internal,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidArgument => "INVALID_ARGUMENT",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::IsDirectory => "IS_DIRECTORY",
            ErrorCode::NotFile => "NOT_FILE",
            ErrorCode::AccessDenied => "ACCESS_DENIED",
            ErrorCode::BinaryFile => "BINARY_FILE",
            ErrorCode::SizeLimitExceeded => "SIZE_LIMIT_EXCEEDED",
            ErrorCode::UnsupportedDocument => "UNSUPPORTED_DOCUMENT",
            ErrorCode::Cancelled => "CANCELLED",
            ErrorCode::Internal => "INTERNAL",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tool error: what went wrong, for which path, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ToolError {
    pub code: ErrorCode,
    pub path: String,
    pub message: String,
}

impl ToolError {
    pub fn new(code: ErrorCode, path: impl Into<String>, message: impl Into<String>) -> Self {
        ToolError {
            code,
            path: path.into(),
            message: message.into(),
        }
    }
}
