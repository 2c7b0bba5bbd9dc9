//! The text rule: which files are read as text and which are refused as binary.
//!
//! A file is **binary** when a NUL byte occurs in its first [`BINARY_SNIFF_BYTES`] bytes
//! and either the file is not valid UTF-8 or NUL bytes are more than one in
//! [`MAX_NUL_SHARE`] of that window. So a NUL decides, as in `git` and `grep`, for what is
//! not text anyway (images, archives, objects, UTF-16 text), while a valid UTF-8 source with
//! a few literal NUL characters in strings, which SBCL reads like any other character, is
//! text.

use crate::error::{ErrorCode, ToolError};

/// Binary sniff window: where NUL bytes are looked for.
pub const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// A valid UTF-8 file stays text while at most one byte in this many of the sniff window
/// is NUL. UTF-16 text of ASCII characters is about every other byte.
pub const MAX_NUL_SHARE: usize = 64;

/// Whether `bytes` are binary by the text rule.
#[must_use]
pub fn is_binary(bytes: &[u8]) -> bool {
    first_nul(bytes).is_some()
}

/// The offset of the NUL that makes `bytes` binary, if they are.
fn first_nul(bytes: &[u8]) -> Option<usize> {
    let window = &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)];
    let first = memchr::memchr(0, window)?;
    let nuls = memchr::memchr_iter(0, window).count();
    let rare = nuls * MAX_NUL_SHARE <= window.len();
    if rare && std::str::from_utf8(bytes).is_ok() {
        return None;
    }
    Some(first)
}

/// `BINARY_FILE` for binary `bytes`, naming `shown` (a path already shown: never shown twice).
pub(super) fn check_text(shown: &str, bytes: &[u8]) -> Result<(), ToolError> {
    let Some(at) = first_nul(bytes) else {
        return Ok(());
    };
    let lower = shown.to_ascii_lowercase();
    let next = if lower.ends_with(".pdf") || lower.ends_with(".docx") {
        "this tool reads text only; the lisp-read-file tool (and the command line) extract \
         the text of PDF and DOCX documents"
    } else {
        "this tool reads text only, use a tool made for binary data"
    };
    Err(ToolError::new(
        ErrorCode::BinaryFile,
        shown,
        format!(
            "binary file (NUL byte at offset {at}, and the file is not UTF-8 text with a few \
             NUL characters): {shown}; {next}"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule() {
        assert!(!is_binary(b"(defun f () 1)"));
        assert!(!is_binary(b""));
        // A few NUL characters in a valid UTF-8 Lisp file: text (SBCL reads them).
        let mut lisp = b"(defvar *k* \"".to_vec();
        lisp.push(0);
        lisp.extend_from_slice("\") ; \u{e9}\n".as_bytes());
        lisp.extend(std::iter::repeat_n(b' ', 100));
        assert!(!is_binary(&lisp));
        // Invalid UTF-8 with a NUL: binary.
        assert!(is_binary(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"));
        // UTF-16 text: valid UTF-8 bytes, but half of them NUL.
        let utf16: Vec<u8> = "(defun f () 1)".bytes().flat_map(|b| [b, 0]).collect();
        assert!(is_binary(&utf16));
        // The share is of the window: exactly one in 64 is still text, one more is not.
        let mut edge = vec![b'a'; 128];
        edge[0] = 0;
        edge[64] = 0;
        assert!(!is_binary(&edge));
        edge[100] = 0;
        assert!(is_binary(&edge));
        // A NUL past the window: text whatever follows.
        let mut late = vec![b'x'; BINARY_SNIFF_BYTES + 1];
        late[BINARY_SNIFF_BYTES] = 0;
        late.push(0xff);
        assert!(!is_binary(&late));
    }
}
