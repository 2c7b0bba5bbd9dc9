//! The text rule: which files are read as text and which are refused as binary.
//!
//! A file is **binary** when a NUL byte occurs in its first [`BINARY_SNIFF_BYTES`] bytes
//! and either the file is not valid UTF-8 or NUL bytes are more than one in
//! [`MAX_NUL_SHARE`] of that window. So a NUL decides, as in `git` and `grep`, for what is
//! not text anyway (images, archives, objects, UTF-16 text), while a valid UTF-8 source with
//! a few literal NUL characters in strings, which SBCL reads like any other character, is
//! text.
//!
//! Text in an encoding the views cannot show is refused the same way, with what it is:
//! **UTF-16** (a byte-order mark, or the NUL of every other byte that the rule above
//! finds) and **EBCDIC** (not UTF-8, and nearly every byte of the sniff window one that
//! EBCDIC text is made of, its space 0x40 common): shown as UTF-8 either would be garbage
//! that looks like an answer.

use crate::error::{ErrorCode, ToolError};

/// Binary sniff window: where NUL bytes are looked for.
pub const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// A valid UTF-8 file stays text while at most one byte in this many of the sniff window
/// is NUL. UTF-16 text of ASCII characters is about every other byte.
pub(super) const MAX_NUL_SHARE: usize = 64;

/// Whether `bytes` are binary by the text rule (UTF-16 and EBCDIC text included).
#[must_use]
pub fn is_binary(bytes: &[u8]) -> bool {
    first_nul(bytes).is_some() || foreign_text(bytes).is_some()
}

/// Text the views cannot show: its encoding's name, and how to convert it.
fn foreign_text(bytes: &[u8]) -> Option<(&'static str, &'static str)> {
    let window = &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)];
    if window.starts_with(b"\xff\xfe") || window.starts_with(b"\xfe\xff") || utf16_nuls(window) {
        return Some(("UTF-16 text", "iconv -f UTF-16 -t UTF-8"));
    }
    if looks_ebcdic(window) && std::str::from_utf8(bytes).is_err() {
        return Some(("EBCDIC text", "iconv -f EBCDIC-US -t UTF-8"));
    }
    None
}

/// NUL bytes on one parity only and at least a third of it: UTF-16 of mostly ASCII text.
fn utf16_nuls(window: &[u8]) -> bool {
    let pairs = window.len() / 2;
    // Most windows have no NUL at all: one SIMD search says so.
    if pairs < 4 || memchr::memchr(0, window).is_none() {
        return false;
    }
    let (mut even, mut odd) = (0, 0);
    for pair in window.chunks_exact(2) {
        even += usize::from(pair[0] == 0);
        odd += usize::from(pair[1] == 0);
    }
    (even == 0 && odd * 3 >= pairs) || (odd == 0 && even * 3 >= pairs)
}

/// At least 95% of the window bytes EBCDIC text is made of (letters, digits, space,
/// punctuation, its line ends), and its space (0x40, `@` in ASCII) at least one byte in
/// twenty: ASCII and Latin-1 text fail the first (their small letters are not in the
/// set), binary data the second.
fn looks_ebcdic(window: &[u8]) -> bool {
    if window.len() < 16 {
        return false;
    }
    let ebcdic_text = |b: u8| {
        matches!(b,
            0x05 | 0x0D | 0x15 | 0x25 | 0x40 | 0x4B..=0x50 | 0x5A..=0x61 | 0x6B..=0x6F
            | 0x7A..=0x7F | 0x81..=0x89 | 0x91..=0x99 | 0xA1..=0xA9 | 0xC0..=0xC9
            | 0xD0..=0xD9 | 0xE0 | 0xE2..=0xE9 | 0xF0..=0xF9)
    };
    // The spaces first: one SIMD count, and ASCII text (where `@` is rare) stops here.
    let spaces = memchr::memchr_iter(0x40, window).count();
    if spaces * 20 < window.len() {
        return false;
    }
    let text = window.iter().filter(|&&b| ebcdic_text(b)).count();
    text * 100 >= window.len() * 95
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
    if let Some((what, convert)) = foreign_text(bytes) {
        let shown = shown.to_string();
        return Err(ToolError::new(
            ErrorCode::BinaryFile,
            shown.clone(),
            format!(
                "{what}, not UTF-8: {shown}; this tool reads UTF-8 (and ASCII) text: convert it first, e.g. `{convert}`"
            ),
        ));
    }
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
        // UTF-16 (with or without a byte-order mark) and EBCDIC text are refused as such.
        let refused = |bytes: &[u8]| check_text("f", bytes).unwrap_err().message;
        assert!(refused(&utf16).starts_with("UTF-16 text, not UTF-8"));
        assert!(refused(b"\xff\xfe(\0d\0").starts_with("UTF-16 text"));
        // "HELLO WORLD, (DEFUN F () 1)" and a line end, in EBCDIC (code page 037).
        let ebcdic: Vec<u8> = b"\xc8\xc5\xd3\xd3\xd6\x40\xe6\xd6\xd9\xd3\xc4\x6b\x40\x4d\xc4\xc5\xc6\xe4\xd5\x40\xc6\x40\x4d\x5d\x40\xf1\x5d\x25"
            .repeat(20);
        assert!(is_binary(&ebcdic));
        assert!(refused(&ebcdic).starts_with("EBCDIC text, not UTF-8"));
        // Latin-1 and ASCII text stay text.
        assert!(!is_binary(
            b"caf\xe9 au lait, cr\xe8me br\xfbl\xe9e @ 5 \xe9tages\n"
                .repeat(20)
                .as_slice()
        ));
        assert!(!is_binary(
            b"@@@@ (defun f () 1) @@@@\n".repeat(20).as_slice()
        ));
        // A NUL past the window: text whatever follows.
        let mut late = vec![b'x'; BINARY_SNIFF_BYTES + 1];
        late[BINARY_SNIFF_BYTES] = 0;
        late.push(0xff);
        assert!(!is_binary(&late));
    }
}
