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
    /// Every code, in the order of docs/errors.md: the one list the schemas and docs
    /// checks are made from.
    pub const ALL: [ErrorCode; 10] = [
        ErrorCode::InvalidArgument,
        ErrorCode::NotFound,
        ErrorCode::IsDirectory,
        ErrorCode::NotFile,
        ErrorCode::AccessDenied,
        ErrorCode::BinaryFile,
        ErrorCode::SizeLimitExceeded,
        ErrorCode::UnsupportedDocument,
        ErrorCode::Cancelled,
        ErrorCode::Internal,
    ];

    /// The codes a tool call answers with on the CLI and over MCP: all but `CANCELLED`,
    /// which only the library returns (a cancelled MCP request gets no answer).
    pub fn reported() -> impl Iterator<Item = ErrorCode> {
        ErrorCode::ALL
            .into_iter()
            .filter(|&code| code != ErrorCode::Cancelled)
    }

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

/// A definer table that cannot be read is the caller's argument in error.
impl From<crate::grammar::GrammarError> for ToolError {
    fn from(e: crate::grammar::GrammarError) -> Self {
        ToolError::new(ErrorCode::InvalidArgument, e.origin, e.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_listed_once_and_serializes_as_its_name() {
        let names: std::collections::HashSet<_> =
            ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(names.len(), ErrorCode::ALL.len());
        for code in ErrorCode::ALL {
            // A code missing from ALL would not be matched here: the match is exhaustive.
            match code {
                ErrorCode::InvalidArgument
                | ErrorCode::NotFound
                | ErrorCode::IsDirectory
                | ErrorCode::NotFile
                | ErrorCode::AccessDenied
                | ErrorCode::BinaryFile
                | ErrorCode::SizeLimitExceeded
                | ErrorCode::UnsupportedDocument
                | ErrorCode::Cancelled
                | ErrorCode::Internal => {}
            }
            assert_eq!(serde_json::to_value(code).unwrap(), code.as_str());
        }
        assert!(ErrorCode::reported().all(|c| c != ErrorCode::Cancelled));
        assert_eq!(ErrorCode::reported().count(), ErrorCode::ALL.len() - 1);
    }
}
