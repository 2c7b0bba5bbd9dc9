//! Source: the file's bytes as text: where the text starts (after a UTF-8 BOM), whether it
//! is valid UTF-8, and the byte offset of every line start. Offsets everywhere in the crate
//! are byte offsets into the original bytes, so a view can quote any span exactly.

use std::borrow::Cow;
use std::cell::OnceCell;

/// The UTF-8 byte-order mark: not text; the reader and the views skip it.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Decoded view of a file's bytes.
#[derive(Debug, Clone)]
pub struct Source<'a> {
    bytes: &'a [u8],
    /// 3 when the file starts with a UTF-8 byte-order mark, else 0.
    text_start: usize,
    /// Byte offset of the start of every line (the first is `text_start`), built on first
    /// use: the collapsed view never needs it, only the number of lines.
    line_starts: OnceCell<Vec<usize>>,
    line_count: usize,
    valid_utf8: bool,
}

impl<'a> Source<'a> {
    pub fn new(bytes: &'a [u8]) -> Source<'a> {
        let text_start = if bytes.starts_with(BOM) { BOM.len() } else { 0 };
        // A line starts at `text_start` and after every newline but a final one.
        let line_count = if text_start < bytes.len() {
            1 + memchr::memchr_iter(b'\n', bytes).count() - usize::from(bytes.ends_with(b"\n"))
        } else {
            0
        };
        Source {
            bytes,
            text_start,
            line_starts: OnceCell::new(),
            line_count,
            valid_utf8: std::str::from_utf8(bytes).is_ok(),
        }
    }

    fn line_starts(&self) -> &[usize] {
        self.line_starts.get_or_init(|| {
            let bytes = self.bytes;
            let mut line_starts = Vec::with_capacity(self.line_count);
            if self.text_start < bytes.len() {
                line_starts.push(self.text_start);
            }
            for nl in memchr::memchr_iter(b'\n', bytes) {
                if nl + 1 < bytes.len() {
                    line_starts.push(nl + 1);
                }
            }
            line_starts
        })
    }

    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Number of lines: a last line without a newline counts; an empty file has none.
    pub fn line_count(&self) -> usize {
        self.line_count
    }

    /// False when the bytes are not valid UTF-8 and text is decoded with U+FFFD.
    pub fn is_valid_utf8(&self) -> bool {
        self.valid_utf8
    }

    /// The text of `[start, end)`, decoded (invalid sequences become U+FFFD).
    pub fn text(&self, start: usize, end: usize) -> Cow<'a, str> {
        let start = start.max(self.text_start).min(self.bytes.len());
        let end = end.clamp(start, self.bytes.len());
        self.decoded(start, end)
    }

    /// The text of 0-based line `index`, without its line break (`\n` or `\r\n`).
    pub fn line(&self, index: usize) -> Cow<'a, str> {
        let (start, end) = self.line_span(index);
        self.decoded(start, end)
    }

    /// The bytes `[start, end)` as text: borrowed without a second check when the file
    /// is valid UTF-8 and the span starts and ends at characters (a view takes hundreds
    /// of spans of a file; checking each again was 2% of a collapsed view).
    fn decoded(&self, start: usize, end: usize) -> Cow<'a, str> {
        if self.valid_utf8 {
            // SAFETY: `valid_utf8` is `from_utf8(bytes).is_ok()`, computed in `new`.
            let whole = unsafe { std::str::from_utf8_unchecked(self.bytes) };
            if let Some(text) = whole.get(start..end) {
                return Cow::Borrowed(text);
            }
        }
        String::from_utf8_lossy(&self.bytes[start..end])
    }

    /// The bytes `[start, end)` of 0-based line `index`, without its line break.
    pub fn line_span(&self, index: usize) -> (usize, usize) {
        let line_starts = self.line_starts();
        let start = line_starts[index];
        let next = line_starts
            .get(index + 1)
            .copied()
            .unwrap_or(self.bytes.len());
        (start, line_end(self.bytes, start, next))
    }

    /// The lines from 0-based line `first` on, each as [`Source::line`] gives it, found
    /// without the line index: a view that shows a window of lines does not keep the
    /// start of every line of the file.
    pub fn lines_from(&self, first: usize) -> impl Iterator<Item = Cow<'a, str>> + '_ {
        let bytes = self.bytes;
        self.line_spans_from(first)
            .map(move |(start, end)| String::from_utf8_lossy(&bytes[start..end]))
    }

    /// The byte spans of the lines from 0-based line `first` on, as
    /// [`Source::line_span`] gives them, found without the line index.
    pub fn line_spans_from(&self, first: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        let bytes = self.bytes;
        let mut at = match first.checked_sub(1) {
            _ if first >= self.line_count => bytes.len(),
            None => self.text_start,
            Some(k) => memchr::memchr_iter(b'\n', bytes)
                .nth(k)
                .map_or(bytes.len(), |nl| nl + 1),
        };
        std::iter::from_fn(move || {
            if at >= bytes.len() {
                return None;
            }
            let next = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |k| at + k + 1);
            let span = (at, line_end(bytes, at, next));
            at = next;
            Some(span)
        })
    }

    /// The 0-based line that contains byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        self.line_starts()
            .partition_point(|&s| s <= offset)
            .saturating_sub(1)
    }

    /// Byte offset where 0-based line `index` starts (the end of the file past the last).
    pub fn line_start(&self, index: usize) -> usize {
        self.line_starts()
            .get(index)
            .copied()
            .unwrap_or(self.bytes.len())
    }
}

/// The end of the line `[start, next)` without its line break (`\n`, `\r\n`).
fn line_end(bytes: &[u8], start: usize, next: usize) -> usize {
    let mut end = next;
    if end > start && bytes[end - 1] == b'\n' {
        end -= 1;
    }
    if end > start && bytes[end - 1] == b'\r' {
        end -= 1;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_of_a_valid_file_is_borrowed_and_a_cut_character_is_replaced() {
        let s = Source::new("\u{e9}(a)\n".as_bytes());
        assert!(matches!(s.text(0, 5), Cow::Borrowed("\u{e9}(a)")));
        assert!(matches!(s.line(0), Cow::Borrowed("\u{e9}(a)")));
        // A span that cuts the two bytes of \u{e9} decodes as any invalid text does.
        assert_eq!(s.text(1, 3), "\u{fffd}(");
        assert_eq!(Source::new(b"x\xffy").text(0, 3), "x\u{fffd}y");
    }

    #[test]
    fn lines_crlf_bom_and_invalid_utf8() {
        let s = Source::new(b"\xEF\xBB\xBFa\r\nb\n\nc");
        assert_eq!(s.line_count(), 4);
        assert_eq!(
            (s.line(0), s.line(1), s.line(2), s.line(3)),
            ("a".into(), "b".into(), "".into(), "c".into())
        );
        assert_eq!(s.line_of(3), 0);
        assert_eq!(s.line_of(6), 1);
        assert!(s.is_valid_utf8());
        let bad = Source::new(b"x\xffy\n");
        assert_eq!((bad.line_count(), bad.is_valid_utf8()), (1, false));
        assert_eq!(bad.line(0), "x\u{fffd}y");
        assert_eq!(Source::new(b"").line_count(), 0);
        for text in [
            &b"\xEF\xBB\xBFa\r\nb\n\nc"[..],
            b"a\n",
            b"\n\n",
            b"",
            b"x\xffy\nz\r\n",
        ] {
            let s = Source::new(text);
            for first in 0..=s.line_count() + 1 {
                let indexed: Vec<_> = (first..s.line_count()).map(|i| s.line(i)).collect();
                let walked: Vec<_> = s.lines_from(first).collect();
                assert_eq!(walked, indexed, "{text:?} from line {first}");
            }
        }
        assert_eq!(Source::new(b"\n").line_count(), 1);
    }
}
