//! Documents (docs/documents.md): the text of a PDF, a DOCX file or a Jupyter notebook,
//! extracted from bytes the guard read, so that the views (line windows, grep, the
//! collapsed view of a Common Lisp notebook) and the strategies apply to it.
//!
//! Pure: bytes in, text out. This layer sits between the guard and `source` and **does not
//! touch the file system**: the parsers see only the bytes they are given. Every document
//! is treated as hostile: the guard caps the file's size, and here the pages, the ZIP
//! entries, the bytes they inflate to, the extracted text and the time spent are bounded;
//! a parser that fails, or panics, gives `UNSUPPORTED_DOCUMENT`, never a crash.

#[cfg(feature = "documents")]
mod docx;
mod ipynb;
#[cfg(feature = "documents")]
mod pdf;
#[cfg(feature = "documents")]
mod pdf_budget;
#[cfg(feature = "documents")]
mod pdf_tokens;
#[cfg(feature = "documents")]
mod zip_limits;

use crate::cancel::CancelToken;
use crate::error::{ErrorCode, ToolError};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// The document formats read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Pdf,
    Docx,
    Ipynb,
}

impl Format {
    /// The format a path names by its extension (case-insensitive).
    #[must_use]
    pub fn of_path(path: &str) -> Option<Format> {
        let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
        match ext.as_deref() {
            Some("pdf") => Some(Format::Pdf),
            Some("docx") => Some(Format::Docx),
            Some("ipynb") => Some(Format::Ipynb),
            _ => None,
        }
    }

    /// The format of bytes whose extension names none: only a PDF is recognised by its
    /// content (`%PDF-` at the start); a ZIP could be anything.
    #[must_use]
    pub fn sniff(bytes: &[u8]) -> Option<Format> {
        bytes.starts_with(b"%PDF-").then_some(Format::Pdf)
    }

    /// The name used in messages and in `meta.document.format`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Pdf => "pdf",
            Format::Docx => "docx",
            Format::Ipynb => "ipynb",
        }
    }
}

/// How much work a document may cost (docs/documents.md#limits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// PDF pages read; the text says where it stopped.
    pub max_pages: usize,
    /// Bytes any one PDF stream may decompress to (lopdf's own bound, at load and per page).
    pub max_stream_bytes: usize,
    /// ZIP entries in a DOCX file.
    pub max_entries: usize,
    /// Bytes one ZIP entry may inflate to, declared or actual.
    pub max_entry_bytes: u64,
    /// Bytes all the entries read may inflate to together.
    pub max_total_bytes: u64,
    /// Largest uncompressed/compressed ratio of an entry over 1 MiB.
    pub max_ratio: u64,
    /// Bytes of extracted text; the text is cut there, with a marker line.
    pub max_text_bytes: usize,
    /// Wall-clock time for one extraction, checked between pages, entries, XML events and
    /// cells.
    pub max_time: Duration,
}

/// Default limits: a document file is at most 32 MiB (the guard), its text at most 8 MiB.
pub const DEFAULT_LIMITS: Limits = Limits {
    max_pages: 2_000,
    max_stream_bytes: 16 * 1024 * 1024,
    max_entries: 10_000,
    max_entry_bytes: 32 * 1024 * 1024,
    max_total_bytes: 64 * 1024 * 1024,
    max_ratio: 200,
    max_text_bytes: 8 * 1024 * 1024,
    max_time: Duration::from_secs(20),
};

impl Default for Limits {
    fn default() -> Limits {
        DEFAULT_LIMITS
    }
}

/// What `meta.document` says about a document read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentInfo {
    pub format: Format,
    /// PDF: pages in the document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<usize>,
    /// Notebook: cells in the notebook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cells: Option<usize>,
    /// Notebook: the kernel's language, as its metadata names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// The text was cut by a limit (pages, text size); its last line says which.
    #[serde(default, skip_serializing_if = "is_false")]
    pub truncated: bool,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_false(b: &bool) -> bool {
    !*b
}

/// The text of a document and what is known about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extracted {
    pub text: String,
    /// Read as Lisp (a notebook of a Common Lisp kernel): the collapsed view applies.
    pub lisp: bool,
    pub info: DocumentInfo,
}

/// Extracts the text of `bytes`, a document of `format` shown as `shown`.
///
/// # Errors
/// `UNSUPPORTED_DOCUMENT` for a document that cannot be read (corrupt, encrypted, over a
/// limit, a parser failure or panic, or a build without the `documents` feature);
/// `CANCELLED` when `cancel` is set.
pub fn extract(
    format: Format,
    bytes: &[u8],
    shown: &str,
    limits: &Limits,
    cancel: &CancelToken,
) -> Result<Extracted, ToolError> {
    let budget = Budget::new(shown, limits, cancel);
    let run = || match format {
        Format::Ipynb => ipynb::extract(bytes, &budget),
        #[cfg(feature = "documents")]
        Format::Pdf => pdf::extract(bytes, &budget),
        #[cfg(feature = "documents")]
        Format::Docx => docx::extract(bytes, &budget),
        #[cfg(not(feature = "documents"))]
        Format::Pdf | Format::Docx => Err(unsupported(
            shown,
            format!(
                "this build of lisp-read-file has no document support (built without the \
                 `documents` feature), so {shown} cannot be read; use a build with default \
                 features, or convert the {} to text",
                format.as_str().to_ascii_uppercase()
            ),
        )),
    };
    // A parser bug must not take the server down: a panic is this document's error.
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(result) => result,
        Err(_) => Err(unsupported(
            shown,
            format!(
                "the {} parser failed on {shown} (it panicked); the file is damaged or uses \
                 something the parser does not handle: convert it to text with another tool",
                format.as_str().to_ascii_uppercase()
            ),
        )),
    }
}

/// `UNSUPPORTED_DOCUMENT` naming `shown`.
pub(crate) fn unsupported(shown: &str, message: impl Into<String>) -> ToolError {
    ToolError::new(ErrorCode::UnsupportedDocument, shown, message)
}

/// The limits of one extraction, its clock and its cancel token, and the text it builds.
pub(crate) struct Budget<'a> {
    pub shown: &'a str,
    pub limits: &'a Limits,
    cancel: &'a CancelToken,
    started: Instant,
}

impl<'a> Budget<'a> {
    fn new(shown: &'a str, limits: &'a Limits, cancel: &'a CancelToken) -> Budget<'a> {
        Budget {
            shown,
            limits,
            cancel,
            started: Instant::now(),
        }
    }

    /// `CANCELLED`, or `UNSUPPORTED_DOCUMENT` once the time limit has passed.
    pub(crate) fn check(&self) -> Result<(), ToolError> {
        if self.cancel.is_cancelled() {
            return Err(ToolError::new(
                ErrorCode::Cancelled,
                self.shown,
                "the request was cancelled before its answer was ready; ask again if it is still wanted",
            ));
        }
        if self.started.elapsed() > self.limits.max_time {
            return Err(self.over_limit(format!(
                "reading took longer than the {} s time limit",
                self.limits.max_time.as_secs()
            )));
        }
        Ok(())
    }

    /// `UNSUPPORTED_DOCUMENT`: `why` this document is refused, and what to do.
    pub(crate) fn refuse(&self, why: impl std::fmt::Display) -> ToolError {
        unsupported(
            self.shown,
            format!(
                "cannot read the document {}: {why}; convert it to text with another tool",
                self.shown
            ),
        )
    }

    /// `UNSUPPORTED_DOCUMENT` for a document over one of the [`Limits`].
    pub(crate) fn over_limit(&self, why: impl std::fmt::Display) -> ToolError {
        unsupported(
            self.shown,
            format!(
                "cannot read the document {}: {why}; the document limits keep a hostile file \
                 from exhausting memory or time: split the document, or convert it to text \
                 with another tool",
                self.shown
            ),
        )
    }
}

/// Extracted text with a byte cap: lines are added until the cap, then one marker line.
pub(crate) struct Text {
    pub out: String,
    cap: usize,
    pub truncated: bool,
}

impl Text {
    pub(crate) fn new(cap: usize) -> Text {
        Text {
            out: String::new(),
            cap,
            truncated: false,
        }
    }

    /// Adds `line` and a line break; past the cap, cuts at a character boundary and ends
    /// the text with a marker. Returns `false` once the text is full.
    pub(crate) fn line(&mut self, line: &str) -> bool {
        if self.truncated {
            return false;
        }
        let room = self.cap.saturating_sub(self.out.len());
        if line.len() < room {
            self.out.push_str(line);
            self.out.push('\n');
            return true;
        }
        let mut cut = room;
        while cut > 0 && !line.is_char_boundary(cut) {
            cut -= 1;
        }
        self.out.push_str(&line[..cut]);
        self.out.push('\n');
        self.stop(&format!(
            "--- text cut at the {}-byte limit of extracted text ---",
            self.cap
        ));
        false
    }

    /// Adds every line of `text`.
    pub(crate) fn lines(&mut self, text: &str) -> bool {
        text.lines().all(|l| self.line(l))
    }

    /// Ends the text with a marker saying why.
    pub(crate) fn stop(&mut self, marker: &str) {
        self.out.push_str(marker);
        self.out.push('\n');
        self.truncated = true;
    }
}

#[cfg(test)]
mod tests;
