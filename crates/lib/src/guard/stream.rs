//! Every line of a file of any size, handed one at a time to a caller (a grep over a file
//! larger than the size cap): one pass through a fixed buffer, each line kept up to a
//! prefix the caller chooses. Memory: the buffer and one line's prefix, never the file.
//! Lines are split as [`crate::source::Source`] splits them (a BOM at the start is not
//! text, `\r\n` ends a line as `\n` does, a last line without `\n` counts).

use super::window::read_chunks;
use super::{content, FileInfo, Guard, Opened};
use crate::cancel::CancelToken;
use crate::error::ToolError;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One line of a streamed file.
#[derive(Debug, Clone, Copy)]
pub struct StreamedLine<'a> {
    /// 0-based index of the line.
    pub index: u64,
    /// Byte offset of its first byte in the file.
    pub start: u64,
    /// Its length in bytes, without the line break.
    pub len: u64,
    /// Its characters (bytes that are not UTF-8 continuation bytes).
    pub chars: u64,
    /// Its first bytes: the whole line when `len` is at most the prefix asked for.
    pub bytes: &'a [u8],
}

/// What a streamed pass saw of the file.
#[derive(Debug, Clone)]
pub struct StreamedFile {
    pub display_path: String,
    /// Lines in the whole file.
    pub total_lines: u64,
    pub info: FileInfo,
}

impl Guard {
    /// Hands every line of a file of any size to `each`, in order, each cut to its first
    /// `keep_per_line` bytes; once `each` returns false the rest of the file is only
    /// counted. The file is read up to the size it had when opened.
    ///
    /// # Errors
    /// Every refusal of [`Guard::read`] but the size cap; `BINARY_FILE` by the text rule on
    /// the file's first 8 KiB; `CANCELLED` when `cancel` is set (polled once per buffer).
    pub fn stream_lines(
        &self,
        user_path: &str,
        keep_per_line: usize,
        cancel: &CancelToken,
        each: &mut dyn FnMut(StreamedLine<'_>) -> bool,
    ) -> Result<StreamedFile, ToolError> {
        let Opened { file, shown, info } = self.open(user_path)?;
        let mut splitter = Splitter::new(keep_per_line);
        read_chunks(&file, info.size, &shown, cancel, &mut |chunk, at| {
            if at == 0 {
                // The text rule, on the file's first bytes, before any line is handed on.
                let head = &chunk[..chunk.len().min(content::BINARY_SNIFF_BYTES)];
                content::check_text(&shown, complete_chars(head))?;
            }
            splitter.feed(chunk, at, each);
            Ok(())
        })?;
        let total_lines = splitter.finish(each);
        Ok(StreamedFile {
            display_path: shown,
            total_lines,
            info,
        })
    }
}

/// `bytes` without a UTF-8 character cut at their end.
fn complete_chars(bytes: &[u8]) -> &[u8] {
    match std::str::from_utf8(bytes) {
        Err(e) if e.error_len().is_none() => &bytes[..e.valid_up_to()],
        _ => bytes,
    }
}

/// The line splitter: fed the file's bytes in order, it hands on each line.
struct Splitter {
    keep: usize,
    /// The line being read: its prefix, where it starts, its length and characters.
    line: Vec<u8>,
    start: u64,
    len: u64,
    chars: u64,
    last_byte: u8,
    index: u64,
    /// The caller wants no more lines: only newlines are counted.
    counting: bool,
    /// Whether the first bytes were looked at for a BOM.
    bom_checked: bool,
}

impl Splitter {
    fn new(keep: usize) -> Splitter {
        Splitter {
            keep,
            line: Vec::new(),
            start: 0,
            len: 0,
            chars: 0,
            last_byte: 0,
            index: 0,
            counting: false,
            bom_checked: false,
        }
    }

    fn feed(
        &mut self,
        mut chunk: &[u8],
        mut at: u64,
        each: &mut dyn FnMut(StreamedLine<'_>) -> bool,
    ) {
        if !self.bom_checked {
            // The buffer is far larger than a BOM: the first chunk holds all of it.
            self.bom_checked = true;
            if chunk.starts_with(BOM) {
                chunk = &chunk[BOM.len()..];
                at += BOM.len() as u64;
                self.start = at;
            }
        }
        while !chunk.is_empty() {
            if self.counting {
                self.index += memchr::memchr_iter(b'\n', chunk).count() as u64;
                self.len = u64::from(chunk.last() != Some(&b'\n'));
                return;
            }
            let nl = memchr::memchr(b'\n', chunk);
            let part = &chunk[..nl.unwrap_or(chunk.len())];
            self.take(part);
            let Some(k) = nl else { return };
            self.end_line(each);
            chunk = &chunk[k + 1..];
            at += k as u64 + 1;
            self.start = at;
        }
    }

    fn take(&mut self, part: &[u8]) {
        if part.is_empty() {
            return;
        }
        self.len += part.len() as u64;
        self.last_byte = part[part.len() - 1];
        self.chars += part.iter().filter(|&&b| b & 0xC0 != 0x80).count() as u64;
        let room = self.keep.saturating_sub(self.line.len()).min(part.len());
        self.line.extend_from_slice(&part[..room]);
    }

    fn end_line(&mut self, each: &mut dyn FnMut(StreamedLine<'_>) -> bool) {
        let mut len = self.len;
        if len > 0 && self.last_byte == b'\r' {
            len -= 1;
            self.chars -= 1;
            if self.line.len() as u64 > len {
                self.line.pop();
            }
        }
        let wanted = each(StreamedLine {
            index: self.index,
            start: self.start,
            len,
            chars: self.chars,
            bytes: &self.line,
        });
        self.index += 1;
        self.line.clear();
        self.len = 0;
        self.chars = 0;
        self.last_byte = 0;
        if !wanted {
            self.counting = true;
            self.line = Vec::new();
        }
    }

    /// The last line, when it has no line break; the number of lines.
    fn finish(mut self, each: &mut dyn FnMut(StreamedLine<'_>) -> bool) -> u64 {
        if self.len > 0 {
            if self.counting {
                self.index += 1;
            } else {
                self.end_line(each);
            }
        }
        self.index
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Source;

    /// The lines a splitter hands on for `bytes` fed in chunks of `chunk` bytes.
    fn split(bytes: &[u8], chunk: usize, keep: usize) -> (Vec<(u64, u64, Vec<u8>)>, u64) {
        let mut out = Vec::new();
        let mut splitter = Splitter::new(keep);
        let mut each = |l: StreamedLine<'_>| {
            out.push((l.start, l.len, l.bytes.to_vec()));
            true
        };
        for (i, part) in bytes.chunks(chunk.max(1)).enumerate() {
            splitter.feed(part, (i * chunk) as u64, &mut each);
        }
        let total = splitter.finish(&mut each);
        (out, total)
    }

    #[test]
    fn streamed_lines_are_the_sources_lines() {
        for text in [
            &b""[..],
            b"a",
            b"a\n",
            b"a\r\nbb\n\nccc",
            b"\xEF\xBB\xBFone\ntwo\r\n",
            b"\n\n\r\n",
            "\u{e9}t\u{e9}\nx".as_bytes(),
        ] {
            let source = Source::new(text);
            for chunk in [64 * 1024, 1, 2, 3] {
                // The BOM is looked for in the first chunk only: a real buffer holds it.
                if text.starts_with(BOM) && chunk < 3 {
                    continue;
                }
                let (lines, total) = split(text, chunk, 100);
                assert_eq!(total as usize, source.line_count(), "{text:?} by {chunk}");
                for (i, (start, len, bytes)) in lines.iter().enumerate() {
                    let (s, e) = source.line_span(i);
                    assert_eq!(
                        (*start, *len),
                        (s as u64, (e - s) as u64),
                        "{text:?} line {i}"
                    );
                    assert_eq!(&bytes[..], &text[s..e]);
                }
            }
        }
    }

    #[test]
    fn long_lines_are_kept_as_prefixes_and_counting_goes_on_after_a_stop() {
        let text = b"abcdef\nxy\nlast";
        let mut seen = Vec::new();
        let mut splitter = Splitter::new(3);
        let mut each = |l: StreamedLine<'_>| {
            seen.push((l.len, l.bytes.to_vec()));
            false
        };
        splitter.feed(text, 0, &mut each);
        assert_eq!(splitter.finish(&mut each), 3);
        assert_eq!(seen, vec![(6, b"abc".to_vec())]);
    }
}
