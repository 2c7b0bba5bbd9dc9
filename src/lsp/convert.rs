//! Between the library's byte offsets and paths and the LSP's positions (lines and UTF-16
//! code units) and `file:` URIs.

use lisp_read_file::scan::Span;
use lsp_types::{Position, Range, Uri};
use std::str::FromStr;

/// Where each line starts, for one text.
pub(super) struct LineIndex<'a> {
    text: &'a [u8],
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub(super) fn new(text: &'a [u8]) -> LineIndex<'a> {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text).map(|i| i + 1));
        LineIndex { text, starts }
    }

    /// The position of byte `offset` (clamped to the text; inside a UTF-8 sequence, its
    /// start).
    pub(super) fn position(&self, offset: usize) -> Position {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let column: usize = String::from_utf8_lossy(&self.text[start..offset])
            .chars()
            .map(char::len_utf16)
            .sum();
        Position::new(line as u32, column as u32)
    }

    pub(super) fn range(&self, span: Span) -> Range {
        Range::new(self.position(span.start), self.position(span.end))
    }

    /// The byte offset of `position`; `None` past the last line. A character past the end
    /// of its line means the line's end (as the protocol says).
    pub(super) fn offset(&self, position: Position) -> Option<usize> {
        let line = position.line as usize;
        let start = *self.starts.get(line)?;
        let end = self
            .starts
            .get(line + 1)
            .map_or(self.text.len(), |&next| next - 1);
        let mut units = 0usize;
        let text = String::from_utf8_lossy(&self.text[start..end]);
        let mut bytes = 0usize;
        for c in text.chars() {
            if units >= position.character as usize {
                break;
            }
            units += c.len_utf16();
            bytes += c.len_utf8();
        }
        Some((start + bytes).min(end))
    }
}

/// The absolute path of a `file:` URI, percent-decoded; `None` for another scheme, a
/// remote host or a path that is not UTF-8.
pub(super) fn path_of(uri: &Uri) -> Option<String> {
    let text = uri.as_str();
    let rest = text.strip_prefix("file://")?;
    let path = match rest.find('/') {
        Some(0) => rest,
        Some(i) if rest[..i].eq_ignore_ascii_case("localhost") => &rest[i..],
        _ => return None,
    };
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let mut bytes = Vec::with_capacity(path.len());
    let mut i = 0;
    let b = path.as_bytes();
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            bytes.push(b[i]);
            i += 1;
        }
    }
    let path = String::from_utf8(bytes).ok()?;
    (!path.contains('\0')).then_some(path)
}

/// The `file:` URI of an absolute path.
pub(super) fn uri_of(path: &str) -> Option<Uri> {
    let mut text = String::from("file://");
    for &c in path.as_bytes() {
        if c.is_ascii_alphanumeric() || b"/-._~".contains(&c) {
            text.push(c as char);
        } else {
            text.push_str(&format!("%{c:02X}"));
        }
    }
    Uri::from_str(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_units() {
        let text = "a\n(é 𝄞 x)\n".as_bytes();
        let index = LineIndex::new(text);
        let x = text.iter().position(|&c| c == b'x').unwrap();
        let p = index.position(x);
        assert_eq!((p.line, p.character), (1, 6));
        assert_eq!(index.offset(p), Some(x));
        assert_eq!(index.offset(Position::new(1, 999)), Some(text.len() - 1));
        assert_eq!(index.offset(Position::new(3, 0)), None);
    }

    #[test]
    fn uris_round_trip() {
        let path = "/tmp/a b/ü%.lisp";
        let uri = uri_of(path).unwrap();
        assert_eq!(path_of(&uri).as_deref(), Some(path));
        assert_eq!(path_of(&Uri::from_str("http://x/y").unwrap()), None);
        // A percent-escape that is not UTF-8; a NUL byte; another host.
        assert_eq!(path_of(&Uri::from_str("file:///a%FF").unwrap()), None);
        assert_eq!(path_of(&Uri::from_str("file:///a%00b").unwrap()), None);
        assert_eq!(path_of(&Uri::from_str("file://host/a").unwrap()), None);
        assert_eq!(
            path_of(&Uri::from_str("file://localhost/a").unwrap()).as_deref(),
            Some("/a")
        );
    }
}
