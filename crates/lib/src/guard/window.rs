//! Windows of files of any size: a byte range read at its offset (`pread`), or a range of
//! lines found by one streaming pass through a fixed buffer. Memory is bounded by the
//! window (at most the size cap), never by the file; the file goes through the same
//! resolution and checks as a whole read ([`Guard::read`]), and the text rule applies to
//! what is read: the file's first 8 KiB and the window's.

use super::content;
use super::messages::read_error;
use super::{FileInfo, Guard, Opened};
use crate::cancel::CancelToken;
use crate::error::{ErrorCode, ToolError};
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;

/// The buffer of the streaming line scan.
pub(super) const SCAN_BUFFER_BYTES: usize = 64 * 1024;

/// What [`read_chunks`] hands each chunk to: the bytes and their offset in the file.
pub(super) type Chunks<'a> = dyn FnMut(&[u8], u64) -> Result<(), ToolError> + 'a;

/// Reads the open `file` in chunks of [`SCAN_BUFFER_BYTES`], handing each on with its
/// offset, up to `size`: the file as it was at open (one that another process keeps
/// extending would otherwise be read for ever). Checks `cancel` before each chunk.
pub(super) fn read_chunks(
    file: &File,
    size: u64,
    shown: &str,
    cancel: &CancelToken,
    each: &mut Chunks<'_>,
) -> Result<(), ToolError> {
    let mut buf = vec![0u8; SCAN_BUFFER_BYTES];
    let mut reader = file.take(size);
    let mut at: u64 = 0;
    loop {
        if cancel.is_cancelled() {
            return Err(ToolError::new(
                ErrorCode::Cancelled,
                shown,
                "the request was cancelled before its answer was ready; ask again if it is still wanted",
            ));
        }
        let n = match reader.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(read_error(shown, &e)),
        };
        each(&buf[..n], at)?;
        at += n as u64;
    }
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A byte range of a file, cut to UTF-8 character boundaries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ByteWindow {
    /// As in [`super::LoadedFile::display_path`].
    pub display_path: String,
    /// The bytes of `start..end`, as they are in the file.
    pub bytes: Vec<u8>,
    /// First byte returned: the asked start, moved forward past the continuation bytes of
    /// a character cut by it (at most 3).
    pub start: u64,
    /// End (exclusive) of what was returned: the asked end, or `start` + the size cap when
    /// that is smaller, moved back to the start of a character cut by it.
    pub end: u64,
    pub info: FileInfo,
}

/// A range of lines of a file, as one scan of the whole file finds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineWindow {
    pub display_path: String,
    /// The returned lines, each without its line break (`\n` or `\r\n`) and followed by
    /// `\n`; a line longer than the kept prefix is cut (see [`LongLine`]).
    pub text: Vec<u8>,
    /// 1-based number of the first returned line.
    pub first_line: u64,
    /// How many lines `text` holds.
    pub returned: u64,
    /// Lines in the whole file (as [`crate::source::Source::line_count`]).
    pub total_lines: u64,
    /// The returned lines longer than the `long_line_bytes` given, with where they are.
    pub long_lines: Vec<LongLine>,
    /// Fewer lines than asked because the size cap was reached.
    pub stopped_by_cap: bool,
    /// The file's last line has no line break.
    pub ends_without_newline: bool,
    pub info: FileInfo,
}

/// A long line of a [`LineWindow`]: where it is in the file, so that a view can say which
/// byte range holds what it does not show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LongLine {
    /// 0-based index of the line in the window.
    pub index: u64,
    /// Byte offset of the line's first byte in the file.
    pub start: u64,
    /// Length of the line in bytes, without its line break.
    pub len: u64,
    /// Its characters (bytes that are not UTF-8 continuation bytes).
    pub chars: u64,
    /// Bytes of it kept in `text` (a prefix).
    pub kept: u64,
}

/// Which lines [`Guard::read_lines`] returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineQuery {
    /// 1-based first line.
    pub first: u64,
    /// At most this many lines.
    pub count: u64,
    /// A longer line is kept as a prefix of this many bytes.
    pub keep_per_line: usize,
    /// Lines longer than this many bytes are listed in [`LineWindow::long_lines`].
    pub long_line_bytes: u64,
}

impl Guard {
    /// The bytes `start..end` of a file of any size (`end`: the end of the file when
    /// `None`), at most the size cap of them, read at their offset. Both ends are moved to
    /// UTF-8 character boundaries ([`ByteWindow`]).
    ///
    /// # Errors
    /// Every refusal of [`Guard::read`] but the size cap; `INVALID_ARGUMENT` naming the
    /// valid range when `start` or `end` is past the end of the file or `end < start`;
    /// `BINARY_FILE` by the text rule on the file's first 8 KiB and on the window.
    pub fn read_bytes(
        &self,
        user_path: &str,
        start: u64,
        end: Option<u64>,
    ) -> Result<ByteWindow, ToolError> {
        let Opened { file, shown, info } = self.open(user_path)?;
        let size = info.size;
        let invalid = |message: String| {
            ToolError::new(
                ErrorCode::InvalidArgument,
                shown.clone(),
                format!(
                    "{message} (reading {}); the valid byte range is 0 to {size}",
                    super::quoted_shown(&shown)
                ),
            )
        };
        if start > size {
            return Err(invalid(format!(
                "the file has {size} bytes: start must be at most {size}, not {start}"
            )));
        }
        let asked_end = end.unwrap_or(size);
        if asked_end > size {
            return Err(invalid(format!(
                "the file has {size} bytes: end must be at most {size}, not {asked_end}"
            )));
        }
        if asked_end < start {
            return Err(invalid(format!(
                "end ({asked_end}) must be at least start ({start})"
            )));
        }
        let want_end = asked_end.min(start.saturating_add(self.max_file_bytes));
        // One byte past the window, to see whether its end cuts a character.
        let len = want_end - start + u64::from(want_end < size);
        let buf = read_at_most(&file, start, len).map_err(|e| read_error(&shown, &e))?;
        let mut from = 0usize;
        if start > 0 {
            while from < 3 && from < buf.len() && is_continuation(buf[from]) {
                from += 1;
            }
        }
        let mut to = usize::try_from(want_end - start)
            .unwrap_or(usize::MAX)
            .min(buf.len());
        let mut back = 0;
        while to < buf.len() && to > from && back < 3 && is_continuation(buf[to]) {
            to -= 1;
            back += 1;
        }
        let to = to.max(from);
        let bytes = buf[from..to].to_vec();
        drop(buf);
        self.check_window_text(&file, &shown, &bytes)?;
        Ok(ByteWindow {
            display_path: shown,
            bytes,
            start: start + from as u64,
            end: start + to as u64,
            info,
        })
    }

    /// Lines `query.first ..` of a file of any size: at most `query.count` lines and at
    /// most the size cap of bytes, found by one pass through a fixed buffer that also
    /// counts every line of the file. Memory: the window, never the file. The file is
    /// read up to the size it had when opened: bytes appended meanwhile are not seen.
    ///
    /// A `first` past the end gives no lines (the caller knows `total_lines` and decides).
    ///
    /// # Errors
    /// Every refusal of [`Guard::read`] but the size cap; `BINARY_FILE` by the text rule on
    /// the file's first 8 KiB and the first 8 KiB of the window.
    pub fn read_lines(&self, user_path: &str, query: LineQuery) -> Result<LineWindow, ToolError> {
        self.read_lines_cancellable(user_path, query, &CancelToken::default())
    }

    /// [`Guard::read_lines`] for a caller that may give up: `cancel` is polled once per
    /// buffer (64 KiB), and a set token ends the scan with `CANCELLED`.
    ///
    /// # Errors
    /// As [`Guard::read_lines`], and `CANCELLED`.
    pub fn read_lines_cancellable(
        &self,
        user_path: &str,
        query: LineQuery,
        cancel: &CancelToken,
    ) -> Result<LineWindow, ToolError> {
        let Opened { file, shown, info } = self.open(user_path)?;
        let mut scan = LineScan::new(query, self.max_file_bytes);
        read_chunks(&file, info.size, &shown, cancel, &mut |chunk, at| {
            scan.feed(chunk, at);
            Ok(())
        })?;
        let window = scan.finish();
        self.check_window_text(&file, &shown, &window.sniff)?;
        Ok(LineWindow {
            display_path: shown,
            text: window.text,
            first_line: query.first,
            returned: window.returned,
            total_lines: window.total_lines,
            long_lines: window.long_lines,
            stopped_by_cap: window.stopped_by_cap,
            ends_without_newline: window.ends_without_newline,
            info,
        })
    }

    /// The text rule on the file's first 8 KiB (read here: a window may start later, or
    /// hold less) and on the window's first bytes; a character cut at the end of either
    /// does not count.
    fn check_window_text(&self, file: &File, shown: &str, window: &[u8]) -> Result<(), ToolError> {
        let head = read_at_most(file, 0, content::BINARY_SNIFF_BYTES as u64)
            .map_err(|e| read_error(shown, &e))?;
        content::check_text(shown, complete_chars(&head))?;
        let sniff = &window[..window.len().min(content::BINARY_SNIFF_BYTES)];
        content::check_text(shown, complete_chars(sniff))
    }
}

/// The lines `query` asks for of text already in memory (the text of a document), split
/// and cut as [`Guard::read_lines`] splits and cuts a file's: no file system, and at most
/// `budget` bytes kept.
#[must_use]
pub fn lines_of(
    display_path: String,
    text: &[u8],
    query: LineQuery,
    budget: u64,
    info: FileInfo,
) -> LineWindow {
    let mut scan = LineScan::new(query, budget);
    for (i, chunk) in text.chunks(SCAN_BUFFER_BYTES).enumerate() {
        scan.feed(chunk, (i * SCAN_BUFFER_BYTES) as u64);
    }
    let window = scan.finish();
    LineWindow {
        display_path,
        text: window.text,
        first_line: query.first,
        returned: window.returned,
        total_lines: window.total_lines,
        long_lines: window.long_lines,
        stopped_by_cap: window.stopped_by_cap,
        ends_without_newline: window.ends_without_newline,
        info,
    }
}

/// `bytes` without a UTF-8 character cut at their end.
fn complete_chars(bytes: &[u8]) -> &[u8] {
    match std::str::from_utf8(bytes) {
        Err(e) if e.error_len().is_none() => &bytes[..e.valid_up_to()],
        _ => bytes,
    }
}

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// Up to `len` bytes at `offset` (fewer at the end of the file).
fn read_at_most(file: &File, offset: u64, len: u64) -> io::Result<Vec<u8>> {
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    let mut buf = vec![0u8; len];
    let mut filled = 0;
    while filled < len {
        match file.read_at(&mut buf[filled..], offset + filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(filled);
    Ok(buf)
}

/// The streaming line splitter: fed the file's bytes in order, it keeps the lines of the
/// window and counts them all. Lines are as [`crate::source::Source`] splits them: a BOM
/// at the start is not text, a line ends at `\n` (a `\r` before it is dropped), a last
/// line without `\n` counts.
struct LineScan {
    query: LineQuery,
    /// Bytes of `text` allowed: the size cap.
    budget: u64,
    /// 1-based number of the line being scanned.
    line: u64,
    /// Offset of its first byte.
    line_start: u64,
    /// Its bytes so far (line break excluded), characters so far, last byte.
    line_len: u64,
    line_chars: u64,
    last_byte: u8,
    /// Whether the line being scanned is kept in the window.
    keeping: bool,
    /// Bytes of the current line pushed to `text`.
    kept: u64,
    /// Lines no longer taken (count reached, or the cap).
    done: bool,
    bom_checked: bool,
    /// The file's first bytes, until there are 3 of them.
    pending: Vec<u8>,
    text: Vec<u8>,
    returned: u64,
    total_lines: u64,
    long_lines: Vec<LongLine>,
    stopped_by_cap: bool,
    /// The first bytes of the window, as they are in the file (for the text rule).
    sniff: Vec<u8>,
}

struct ScannedLines {
    ends_without_newline: bool,
    text: Vec<u8>,
    returned: u64,
    total_lines: u64,
    long_lines: Vec<LongLine>,
    stopped_by_cap: bool,
    sniff: Vec<u8>,
}

impl LineScan {
    fn new(query: LineQuery, budget: u64) -> LineScan {
        LineScan {
            query,
            budget,
            line: 1,
            line_start: 0,
            line_len: 0,
            line_chars: 0,
            last_byte: 0,
            keeping: false,
            kept: 0,
            done: query.count == 0,
            bom_checked: false,
            pending: Vec::new(),
            text: Vec::new(),
            returned: 0,
            total_lines: 0,
            long_lines: Vec::new(),
            stopped_by_cap: false,
            sniff: Vec::new(),
        }
    }

    /// `chunk` is the file's bytes at offset `at` (in order, from 0).
    fn feed(&mut self, mut chunk: &[u8], mut at: u64) {
        if !self.bom_checked {
            // The first 3 bytes decide whether a BOM starts the file, however they come.
            let take = (BOM.len() - self.pending.len()).min(chunk.len());
            self.pending.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
            at += take as u64;
            if self.pending.len() < BOM.len() {
                return;
            }
            self.flush_pending();
        }
        self.process(chunk, at);
    }

    /// The first bytes held back: a BOM is skipped, anything else is text.
    fn flush_pending(&mut self) {
        self.bom_checked = true;
        let pending = std::mem::take(&mut self.pending);
        if pending == BOM {
            self.line_start = BOM.len() as u64;
        } else {
            self.process(&pending, 0);
        }
    }

    fn process(&mut self, mut chunk: &[u8], mut at: u64) {
        if self.done {
            // Past the window: count only.
            self.count_only(chunk);
            return;
        }
        while !chunk.is_empty() {
            if self.line_len == 0 && !self.keeping {
                self.begin_line(at);
                if self.done {
                    self.count_only(chunk);
                    return;
                }
            }
            let nl = memchr::memchr(b'\n', chunk);
            let part = &chunk[..nl.unwrap_or(chunk.len())];
            if !part.is_empty() {
                self.take(part);
            }
            match nl {
                Some(k) => {
                    self.end_line();
                    chunk = &chunk[k + 1..];
                    at += k as u64 + 1;
                    self.line_start = at;
                    if self.done {
                        self.count_only(chunk);
                        return;
                    }
                }
                None => return,
            }
        }
    }

    /// Counts the lines of `chunk` (past the window).
    fn count_only(&mut self, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        let newlines = memchr::memchr_iter(b'\n', chunk).count() as u64;
        self.total_lines += newlines;
        // Whether a line without its `\n` is still open at the end of the chunk.
        if chunk.last() == Some(&b'\n') {
            self.line_len = 0;
        } else {
            self.line_len = 1;
        }
    }

    /// The line starting at `at` is the next one: is it kept?
    fn begin_line(&mut self, at: u64) {
        self.line_start = at;
        if self.line < self.query.first {
            return;
        }
        if self.returned >= self.query.count {
            self.done = true;
            return;
        }
        if self.returned > 0 && self.text.len() as u64 >= self.budget {
            self.done = true;
            self.stopped_by_cap = true;
            return;
        }
        self.keeping = true;
        self.kept = 0;
    }

    fn take(&mut self, part: &[u8]) {
        self.line_len += part.len() as u64;
        self.last_byte = part[part.len() - 1];
        if !self.keeping {
            return;
        }
        if self.sniff.len() < content::BINARY_SNIFF_BYTES {
            let room = content::BINARY_SNIFF_BYTES - self.sniff.len();
            self.sniff.extend_from_slice(&part[..part.len().min(room)]);
        }
        self.line_chars += part.iter().filter(|&&b| !is_continuation(b)).count() as u64;
        let room_line = (self.query.keep_per_line as u64).saturating_sub(self.kept);
        // Room in the cap, keeping one byte for the line's `\n`.
        let room_cap = self
            .budget
            .saturating_sub(self.text.len() as u64)
            .saturating_sub(1);
        let take = room_line.min(room_cap).min(part.len() as u64) as usize;
        self.text.extend_from_slice(&part[..take]);
        self.kept += take as u64;
    }

    fn end_line(&mut self) {
        let mut len = self.line_len;
        if len > 0 && self.last_byte == b'\r' {
            len -= 1;
            self.line_chars = self.line_chars.saturating_sub(1);
            if self.keeping && self.kept > len {
                self.text.pop();
                self.kept -= 1;
            }
        }
        self.total_lines += 1;
        if self.keeping {
            if self.sniff.len() < content::BINARY_SNIFF_BYTES {
                self.sniff.push(b'\n');
            }
            self.text.push(b'\n');
            if len > self.query.long_line_bytes || self.kept < len {
                self.long_lines.push(LongLine {
                    index: self.returned,
                    start: self.line_start,
                    len,
                    chars: self.line_chars,
                    kept: self.kept,
                });
            }
            self.returned += 1;
            self.keeping = false;
            if self.returned >= self.query.count {
                self.done = true;
            }
        }
        self.line += 1;
        self.line_len = 0;
        self.line_chars = 0;
        self.last_byte = 0;
    }

    fn finish(mut self) -> ScannedLines {
        if !self.bom_checked {
            self.flush_pending();
        }
        let ends_without_newline = self.line_len > 0 || self.keeping;
        if self.line_len > 0 || self.keeping {
            if self.keeping && self.line_len == 0 {
                // Cannot happen: a kept line has bytes. Kept safe anyway.
                self.keeping = false;
            } else {
                self.end_line();
            }
        }
        ScannedLines {
            ends_without_newline,
            text: self.text,
            returned: self.returned,
            total_lines: self.total_lines,
            long_lines: self.long_lines,
            stopped_by_cap: self.stopped_by_cap,
            sniff: self.sniff,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Source;

    fn scan(bytes: &[u8], query: LineQuery, budget: u64, chunk: usize) -> ScannedLines {
        let mut s = LineScan::new(query, budget);
        for (i, c) in bytes.chunks(chunk.max(1)).enumerate() {
            s.feed(c, (i * chunk) as u64);
        }
        s.finish()
    }

    fn query(first: u64, count: u64) -> LineQuery {
        LineQuery {
            first,
            count,
            keep_per_line: 1 << 20,
            long_line_bytes: 1 << 20,
        }
    }

    #[test]
    fn streamed_lines_are_the_sources_lines_whatever_the_chunks() {
        for text in [
            &b"\xEF\xBB\xBFa\r\nb\n\nc"[..],
            b"a\n",
            b"\n\n",
            b"",
            b"x\xffy\nz\r\n",
            b"one\ntwo\nthree\nfour",
            b"\r\n\r\nx\r",
        ] {
            let source = Source::new(text);
            for chunk in [1, 2, 3, 7, 64] {
                for first in 1..=source.line_count() as u64 + 1 {
                    for count in [0, 1, 2, 100] {
                        let got = scan(text, query(first, count), 1 << 20, chunk);
                        assert_eq!(got.total_lines, source.line_count() as u64, "{text:?}");
                        let want: Vec<u8> = (first as usize - 1..source.line_count())
                            .take(count as usize)
                            .flat_map(|i| {
                                let s = source.line(i);
                                let mut v = s.as_bytes().to_vec();
                                v.push(b'\n');
                                v
                            })
                            .collect();
                        if source.is_valid_utf8() {
                            assert_eq!(
                                got.text, want,
                                "{text:?} chunk {chunk} first {first} count {count}"
                            );
                        }
                        assert_eq!(
                            got.returned,
                            (source.line_count() as u64 + 1 - first).min(count)
                        );
                    }
                }
            }
        }
    }

    proptest::proptest! {
        /// Any bytes, any chunking, any window: the streamed lines are the source's.
        #[test]
        fn any_bytes_stream_as_the_sources_lines(
            text in proptest::collection::vec(proptest::sample::select(
                vec![b'a', b'\n', b'\r', 0xEF, 0xBB, 0xBF, 0xC3, 0xA9, 0xFF]), 0..64),
            chunk in 1usize..9,
            first in 1u64..12,
            count in 0u64..12,
        ) {
            let source = Source::new(&text);
            let got = scan(&text, query(first, count), 1 << 20, chunk);
            proptest::prop_assert_eq!(got.total_lines, source.line_count() as u64);
            let want: Vec<u8> = source
                .line_spans_from(first as usize - 1)
                .take(count as usize)
                .flat_map(|(s, e)| {
                    let mut v = text[s..e].to_vec();
                    v.push(b'\n');
                    v
                })
                .collect();
            proptest::prop_assert_eq!(got.text, want);
        }
    }

    #[test]
    fn long_lines_are_kept_as_prefixes_with_their_place() {
        let mut text = b"short\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', 100));
        text.extend_from_slice(b"\r\nend\n");
        let q = LineQuery {
            first: 1,
            count: 10,
            keep_per_line: 10,
            long_line_bytes: 8,
        };
        let got = scan(&text, q, 1 << 20, 7);
        assert_eq!(got.text, b"short\nxxxxxxxxxx\nend\n");
        assert_eq!(
            got.long_lines,
            vec![LongLine {
                index: 1,
                start: 6,
                len: 100,
                chars: 100,
                kept: 10
            }]
        );
        // The cap stops the window between lines (the first line is always begun).
        let got = scan(&text, query(1, 10), 12, 5);
        assert_eq!(got.returned, 2);
        assert!(got.stopped_by_cap);
        assert_eq!(got.total_lines, 3);
        assert!(got.text.len() <= 12);
    }
}
