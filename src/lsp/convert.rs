//! Between the library's byte offsets and paths and the LSP's positions (lines and UTF-16
//! code units) and `file:` URIs.

use lisp_read_file::scan::Span;
use lsp_types::{Position, Range, Uri};
use std::cell::RefCell;
use std::collections::HashMap;
use std::str::FromStr;

/// Bytes between two column checkpoints of a line that is not ASCII.
const CHECKPOINT_BYTES: usize = 64;

/// Where each line starts, for one text; converts both ways in time linear in the number
/// of conversions plus the text, whatever the line lengths: an ASCII line's columns are
/// its bytes, and a line that is not ASCII gets (once, on first use) a checkpoint every
/// [`CHECKPOINT_BYTES`], so a conversion decodes at most that many bytes.
///
/// Columns count the text as the client shows it: each valid character is its UTF-16
/// length, each maximal invalid UTF-8 sequence one U+FFFD (as `String::from_utf8_lossy`
/// decodes it), so `offset` and `position` are inverses on every text.
pub(super) struct LineIndex<'a> {
    text: &'a [u8],
    starts: Vec<usize>,
    /// Per line once asked: whether it holds a byte that is not ASCII (0: not asked, 1:
    /// no, 2: yes). Asked, not computed up front: an answer converts a few positions of
    /// a file that can be megabytes long.
    wide: RefCell<Vec<u8>>,
    /// Per wide line once used: `(byte in the line, column)` at character boundaries.
    checkpoints: RefCell<HashMap<usize, Vec<(usize, usize)>>>,
}

/// Calls `f(bytes, units)` for each character of `bytes` (an invalid sequence is one
/// U+FFFD: one unit) until `f` returns false.
fn each_char(bytes: &[u8], f: &mut dyn FnMut(usize, usize) -> bool) {
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if !f(c.len_utf8(), c.len_utf16()) {
                return;
            }
        }
        if !chunk.invalid().is_empty() && !f(chunk.invalid().len(), 1) {
            return;
        }
    }
}

impl<'a> LineIndex<'a> {
    pub(super) fn new(text: &'a [u8]) -> LineIndex<'a> {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text).map(|i| i + 1));
        let wide = RefCell::new(vec![0; starts.len()]);
        LineIndex {
            text,
            starts,
            wide,
            checkpoints: RefCell::default(),
        }
    }

    /// The index of the lines of `text` up to the one holding byte `end`: it converts
    /// the offsets up to `end` as [`LineIndex::new`] does, without counting the lines of
    /// the rest (an answer citing the top of a long file).
    pub(super) fn through(text: &'a [u8], end: usize) -> LineIndex<'a> {
        let end = end.min(text.len());
        let cut = memchr::memchr(b'\n', &text[end..]).map_or(text.len(), |n| end + n);
        LineIndex::new(&text[..cut])
    }

    /// The byte where 0-based `line` starts; `None` past the last line.
    pub(super) fn line_start(&self, line: usize) -> Option<usize> {
        self.starts.get(line).copied()
    }

    /// The length of the text, in bytes.
    pub(super) fn text_len(&self) -> usize {
        self.text.len()
    }

    /// The bytes of 0-based `line`, without its newline; `None` past the last line.
    pub(super) fn line_text(&self, line: usize) -> Option<&'a [u8]> {
        (line < self.starts.len()).then(|| self.line(line))
    }

    /// The bytes of `line`, without its newline.
    fn line(&self, line: usize) -> &'a [u8] {
        let end = self
            .starts
            .get(line + 1)
            .map_or(self.text.len(), |&next| next - 1);
        &self.text[self.starts[line]..end]
    }

    /// Whether `line` holds a byte that is not ASCII (looked at once per line).
    fn is_wide(&self, line: usize) -> bool {
        let known = self.wide.borrow()[line];
        if known != 0 {
            return known == 2;
        }
        let wide = !self.line(line).is_ascii();
        self.wide.borrow_mut()[line] = if wide { 2 } else { 1 };
        wide
    }

    /// The checkpoint of wide `line` found by `before` (true for those at or before the
    /// wanted place): the last such.
    fn checkpoint(&self, line: usize, before: &dyn Fn(&(usize, usize)) -> bool) -> (usize, usize) {
        let mut all = self.checkpoints.borrow_mut();
        let points = all.entry(line).or_insert_with(|| {
            let mut points = vec![(0, 0)];
            let (mut byte, mut column) = (0, 0);
            each_char(self.line(line), &mut |bytes, units| {
                byte += bytes;
                column += units;
                if byte - points.last().map_or(0, |p| p.0) >= CHECKPOINT_BYTES {
                    points.push((byte, column));
                }
                true
            });
            points
        });
        points[points.partition_point(before) - 1]
    }

    /// The position of byte `offset` (clamped to the text; inside a character, its
    /// start).
    pub(super) fn position(&self, offset: usize) -> Position {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let within = offset - self.starts[line];
        if !self.is_wide(line) {
            return Position::new(line as u32, within as u32);
        }
        let (mut byte, mut column) = self.checkpoint(line, &|p| p.0 <= within);
        // Only up to the character around `within` (`utf8_chunks` validates a whole run
        // before its first character: the rest of the line would make this quadratic).
        let text = self.line(line);
        let end = text.len().min(within + 4);
        each_char(&text[byte..end], &mut |bytes, units| {
            if byte + bytes > within {
                return false;
            }
            byte += bytes;
            column += units;
            true
        });
        Position::new(line as u32, column as u32)
    }

    pub(super) fn range(&self, span: Span) -> Range {
        Range::new(self.position(span.start), self.position(span.end))
    }

    /// The byte offset of `position`; `None` past the last line. A character past the end
    /// of its line means the line's end (as the protocol says); inside a character (the
    /// middle of a surrogate pair), the character's end.
    pub(super) fn offset(&self, position: Position) -> Option<usize> {
        let line = position.line as usize;
        let start = *self.starts.get(line)?;
        let text = self.line(line);
        let wanted = position.character as usize;
        if !self.is_wide(line) {
            return Some(start + wanted.min(text.len()));
        }
        let (mut byte, mut column) = self.checkpoint(line, &|p| p.1 <= wanted);
        // The next checkpoint, past `wanted`, is at most a checkpoint's bytes and one
        // character further.
        let end = text.len().min(byte + CHECKPOINT_BYTES + 4);
        each_char(&text[byte..end], &mut |bytes, units| {
            if column >= wanted {
                return false;
            }
            byte += bytes;
            column += units;
            true
        });
        Some(start + byte)
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

/// `path` with `.`, `..` and empty components resolved by their text (`/a/./b//../c` is
/// `/a/c`; `..` at the root stays at the root). Symbolic links are the guard's to follow:
/// files are then compared by identity.
pub(super) fn normal_path(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    format!("/{}", parts.join("/"))
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
    fn an_index_through_an_offset_converts_it_as_the_whole_index_does() {
        let text = "(a)\n(é b)\r\n\n  (c d)\nlast é line".as_bytes();
        let whole = LineIndex::new(text);
        for end in 0..=text.len() {
            let part = LineIndex::through(text, end);
            for offset in 0..=end {
                assert_eq!(
                    part.position(offset),
                    whole.position(offset),
                    "{end} {offset}"
                );
            }
        }
    }

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
    fn offsets_and_positions_are_inverses_on_invalid_utf8_and_long_lines() {
        // Three invalid bytes are three U+FFFD (one unit each), as an editor shows them.
        let text = b"a\n(list \"\xff\xfe\xfd\" xy foo-bar)\n";
        let index = LineIndex::new(text);
        let xy = text.windows(2).position(|w| w == b"xy").unwrap();
        assert_eq!(index.position(xy), Position::new(1, 12));
        assert_eq!(index.offset(Position::new(1, 12)), Some(xy));
        // A long line mixing widths, past many checkpoints: every boundary round-trips.
        let line: String = (0..500)
            .map(|i| ["a", "\u{e9}", "\u{1d11e}", "xy"][i % 4])
            .collect();
        let mut bytes = line.into_bytes();
        bytes.extend_from_slice(b"\xc3 z\n");
        let index = LineIndex::new(&bytes);
        let mut column = 0;
        for chunk in bytes[..bytes.len() - 1].utf8_chunks() {
            for c in chunk.valid().char_indices() {
                let at = c.0 + (chunk.valid().as_ptr() as usize - bytes.as_ptr() as usize);
                assert_eq!(index.position(at), Position::new(0, column));
                assert_eq!(index.offset(Position::new(0, column)), Some(at));
                column += c.1.len_utf16() as u32;
            }
            if !chunk.invalid().is_empty() {
                column += 1;
            }
        }
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
        // `%2e` is a `.`: the dots are resolved after decoding.
        let dotted = path_of(&Uri::from_str("file:///r/src/%2e%2e//x/./a.lisp").unwrap());
        assert_eq!(normal_path(&dotted.unwrap()), "/r/x/a.lisp");
        assert_eq!(normal_path("/../a"), "/a");
    }
}
