//! Line and column of positions visited in increasing order, for the entries of both
//! searches (definitions and references).

use super::USE_TEXT_CHARS;
use memchr::{memchr, memchr_iter, memrchr};

/// Lines and columns of positions visited in increasing order: each byte is looked at a
/// bounded number of times whatever the number of positions.
pub(crate) struct Cursor<'b> {
    b: &'b [u8],
    pos: usize,
    line: usize,
    line_start: usize,
    /// Characters from `line_start` to `pos`.
    column: usize,
    /// The last line's text, by its start: entries of many forms on one line share it.
    text: Option<(usize, String)>,
}

impl<'b> Cursor<'b> {
    pub(super) fn new(b: &'b [u8]) -> Self {
        Cursor {
            b,
            pos: 0,
            line: 1,
            line_start: 0,
            column: 0,
            text: None,
        }
    }

    /// The 1-based line and 0-based column (characters) of `at` (at or after the last
    /// position asked). `line`: the line of `at` when the caller knows it.
    pub(super) fn position(&mut self, at: usize, line: Option<usize>) -> (usize, usize) {
        let at = at.clamp(self.pos, self.b.len());
        let gap = &self.b[self.pos..at];
        match memrchr(b'\n', gap) {
            Some(k) => {
                self.line = line.unwrap_or_else(|| self.line + memchr_iter(b'\n', gap).count());
                self.line_start = self.pos + k + 1;
                self.column = chars(&self.b[self.line_start..at]);
            }
            None => self.column += chars(gap),
        }
        self.pos = at;
        (self.line, self.column)
    }

    /// The text of the current line, cut at [`USE_TEXT_CHARS`] characters (made once per
    /// line: rebuilding it for each of a line's thousands of entries read its window at
    /// each).
    pub(super) fn line_text(&mut self) -> String {
        match &self.text {
            Some((start, text)) if *start == self.line_start => text.clone(),
            _ => {
                let text = self.make_line_text();
                self.text = Some((self.line_start, text.clone()));
                text
            }
        }
    }

    fn make_line_text(&self) -> String {
        let window =
            &self.b[self.line_start..self.b.len().min(self.line_start + 4 * USE_TEXT_CHARS + 4)];
        let line = match memchr(b'\n', window) {
            Some(k) => &window[..k],
            None => window,
        };
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end_matches('\r');
        match text.char_indices().nth(USE_TEXT_CHARS) {
            Some((cut, _)) => format!("{}…", &text[..cut]),
            None if line.len() == window.len() && window.len() < self.b.len() - self.line_start => {
                format!("{text}…")
            }
            None => text.to_string(),
        }
    }
}

/// Characters in `bytes`: every byte but UTF-8 continuation bytes.
fn chars(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&c| c & 0xC0 != 0x80).count()
}
