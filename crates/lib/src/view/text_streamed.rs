//! The text-filtered view of a text file over the size cap (docs/views.md#text-filtered-view):
//! the same grep with context as `text_filtered.rs`, fed one line at a time by the guard's
//! streamed pass ([`crate::guard::Guard::stream_lines`]), so that memory is bounded by the
//! page and the context kept, never by the file. The output is the in-memory grep's.

use super::lines::{join, number_width, shown_line, Line, MAX_LINE_CHARS};
use super::text_filtered::{block_start, footer};
use super::{CutLine, Mode, View, ViewOptions};
use crate::guard::StreamedLine;
use std::collections::VecDeque;

/// Bytes of a line kept to show it: enough for the characters a view shows of it.
pub const SHOWN_LINE_BYTES: usize = 4 * MAX_LINE_CHARS + 4;

/// A line kept as leading context of a match still to come.
struct Kept {
    index: u64,
    start: u64,
    len: u64,
    chars: u64,
    bytes: Vec<u8>,
}

/// A grep fed the lines of a file in order ([`StreamedGrep::line`]), then
/// [`StreamedGrep::finish`]ed with the file's line count.
pub struct StreamedGrep<'o> {
    options: &'o ViewOptions,
    patterns: Vec<&'o crate::pattern::Pattern>,
    /// Bytes of shown text a page may hold (the size cap): with `limit`, what bounds it.
    page_bytes: usize,
    /// The last lines not shown, up to `before()` of them: shown if a match follows.
    before: VecDeque<Kept>,
    before_bytes: usize,
    /// Lines of trailing context still to show after the last match.
    after: usize,
    lines: Vec<Line>,
    shown: usize,
    shown_bytes: usize,
    last_printed: Option<u64>,
    /// Match blocks (a match within the context of the previous one extends its block).
    matches: usize,
    /// Matching lines counted (against `max_count`).
    matched_lines: usize,
    /// A line searched was not valid UTF-8 (decoded with U+FFFD).
    replaced: bool,
    /// Lines that did not match in their kept prefix but go on past it (a match in the
    /// rest is not seen), and the first's index and bytes searched.
    partly_searched: u64,
    first_partly_searched: Option<(u64, usize)>,
    view: View,
}

impl<'o> StreamedGrep<'o> {
    /// A grep with `options`' patterns, context, offset and limit; a page also ends once
    /// it shows `page_bytes` bytes of text.
    pub fn new(options: &'o ViewOptions, page_bytes: usize) -> StreamedGrep<'o> {
        StreamedGrep {
            options,
            patterns: [&options.content_pattern, &options.name_pattern]
                .into_iter()
                .flatten()
                .collect(),
            page_bytes,
            before: VecDeque::new(),
            before_bytes: 0,
            after: 0,
            lines: Vec::new(),
            shown: 0,
            shown_bytes: 0,
            last_printed: None,
            matches: 0,
            matched_lines: 0,
            replaced: false,
            partly_searched: 0,
            first_partly_searched: None,
            view: View::empty(Mode::TextFiltered),
        }
    }

    /// The next line of the file. False once the page is full: the rest of the file
    /// needs only counting.
    pub fn line(&mut self, line: StreamedLine<'_>) -> bool {
        if line.index < self.options.offset as u64 {
            return true;
        }
        let at_max_count = self
            .options
            .max_count
            .is_some_and(|m| self.matched_lines >= m);
        if at_max_count && self.after == 0 {
            // As grep -m: the Nth match's block is done; the rest (from this line, so
            // that a block that ends the file stops nothing) is not searched.
            self.view.stopped_at_max_count = self.options.max_count;
            return false;
        }
        let text = String::from_utf8_lossy(line.bytes);
        self.replaced |= matches!(text, std::borrow::Cow::Owned(_));
        if !at_max_count && self.patterns.iter().any(|p| p.is_match(&text)) {
            if self.after == 0 {
                self.matches += 1;
            }
            self.matched_lines += 1;
            if !self.drop_unshown_context(line.index) {
                return false;
            }
            while let Some(kept) = self.before.pop_front() {
                if !self.push(
                    kept.index,
                    kept.start,
                    kept.len,
                    kept.chars,
                    &kept.bytes,
                    '-',
                ) {
                    return false;
                }
            }
            self.before_bytes = 0;
            self.after = self.options.after();
            return self.push(
                line.index, line.start, line.len, line.chars, line.bytes, ':',
            );
        }
        if !at_max_count && line.len > line.bytes.len() as u64 {
            self.partly_searched += 1;
            self.first_partly_searched
                .get_or_insert((line.index, line.bytes.len()));
        }
        if self.after > 0 {
            self.after -= 1;
            return self.push(
                line.index, line.start, line.len, line.chars, line.bytes, '-',
            );
        }
        self.keep_before(line);
        true
    }

    /// Before the match at `index`: leaves out the leading context the page has no room
    /// for (the lines farthest from the match), as the in-memory grep does; false (the
    /// page cut where the block starts) when the page is full.
    fn drop_unshown_context(&mut self, index: u64) -> bool {
        let i = usize::try_from(index).unwrap_or(usize::MAX);
        let last = self.last_printed.and_then(|p| usize::try_from(p).ok());
        let room = if self.shown_bytes >= self.page_bytes {
            0
        } else {
            self.options.limit - self.shown
        };
        let from = block_start(i, self.options, last, room) as u64;
        if room == 0 {
            self.view.truncated = true;
            self.view.next_offset = usize::try_from(from).ok();
            return false;
        }
        while self.before.front().is_some_and(|k| k.index < from) {
            if let Some(old) = self.before.pop_front() {
                self.before_bytes -= old.bytes.len();
            }
        }
        true
    }

    /// Keeps `line` as leading context: the last `before()` lines (no more than a
    /// page can show, in lines and in bytes; the lines nearest the match are kept).
    fn keep_before(&mut self, line: StreamedLine<'_>) {
        let most = self.options.before().min(self.options.limit);
        if most == 0 {
            return;
        }
        let bytes = line.bytes[..line.bytes.len().min(SHOWN_LINE_BYTES)].to_vec();
        self.before_bytes += bytes.len();
        self.before.push_back(Kept {
            index: line.index,
            start: line.start,
            len: line.len,
            chars: line.chars,
            bytes,
        });
        while self.before.len() > most || self.before_bytes > self.page_bytes {
            if let Some(old) = self.before.pop_front() {
                self.before_bytes -= old.bytes.len();
            }
        }
    }

    /// Shows line `index` with `sep` (`:` a match, `-` context), after a `--` when lines
    /// were skipped since the last one shown; false (and the page cut there) when full.
    fn push(
        &mut self,
        index: u64,
        start: u64,
        len: u64,
        chars: u64,
        kept: &[u8],
        sep: char,
    ) -> bool {
        if self.shown == self.options.limit || self.shown_bytes >= self.page_bytes {
            self.view.truncated = true;
            self.view.next_offset = usize::try_from(index).ok();
            return false;
        }
        if self.last_printed.is_some_and(|p| index > p + 1) {
            self.lines.push(Line::Plain("--".into()));
        }
        let (text, rest) = shown_line(kept, start, len, Some(chars), self.options.hints);
        if let Some((start, end)) = rest {
            self.view.cut_lines.push(CutLine {
                line: index + 1,
                start,
                end,
            });
        }
        self.shown_bytes += text.len();
        self.lines.push(Line::Grep {
            number: usize::try_from(index + 1).unwrap_or(usize::MAX),
            sep,
            text,
        });
        self.shown += 1;
        self.last_printed = Some(index);
        true
    }

    /// Whether a line searched so far was not valid UTF-8 (the lines after a full page are
    /// only counted, not decoded).
    pub fn replaced_invalid_utf8(&self) -> bool {
        self.replaced
    }

    /// Whether a line that did not match was searched in its kept prefix only.
    pub fn partly_searched(&self) -> bool {
        self.partly_searched > 0
    }

    /// The view, once the file's `total_lines` are known.
    pub fn finish(mut self, total_lines: u64) -> View {
        let total = usize::try_from(total_lines).unwrap_or(usize::MAX);
        footer(
            &mut self.lines,
            &self.view,
            self.matches,
            total,
            self.options,
        );
        // Without it, "no line matched" would hide that a match may lie past the prefix.
        if let Some((first, searched)) = self.first_partly_searched {
            self.lines.push(Line::Note(format!(
                "[{} line(s) longer than the size cap searched in their first {searched} bytes only, the first at line {}; to search them whole, {}.]",
                self.partly_searched,
                first + 1,
                self.options.hints.render(&crate::hint::Hint::SizeCap)
            )));
        }
        let mut view = self.view;
        view.expanded_forms = self.matches;
        view.content = join(&self.lines, number_width(total));
        view
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pattern::Pattern;
    use crate::source::Source;

    /// A grep of `hit` as the read tool would ask it (the view layer is tested without it).
    fn grep_options(context_lines: usize, offset: usize, limit: usize) -> ViewOptions {
        ViewOptions {
            content_pattern: Some(Pattern::regex_or_literal("hit", false).unwrap()),
            context_lines,
            offset,
            limit,
            ..ViewOptions::default()
        }
    }

    /// The streamed grep of `text`, fed the source's lines as the guard hands them on.
    fn streamed(text: &str, options: &ViewOptions, page_bytes: usize) -> View {
        let source = Source::new(text.as_bytes());
        let mut grep = StreamedGrep::new(options, page_bytes);
        for i in 0..source.line_count() {
            let (start, end) = source.line_span(i);
            let bytes = &text.as_bytes()[start..end];
            let wanted = grep.line(StreamedLine {
                index: i as u64,
                start: start as u64,
                len: bytes.len() as u64,
                chars: bytes.iter().filter(|&&b| b & 0xC0 != 0x80).count() as u64,
                bytes,
            });
            if !wanted {
                break;
            }
        }
        grep.finish(source.line_count() as u64)
    }

    #[test]
    fn the_streamed_grep_is_the_in_memory_grep() {
        // Texts of 0 to 40 lines, hits at pseudo-random places (runs, gaps, first and last
        // lines), one line longer than a view shows.
        let mut seed = 7u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed >> 33
        };
        let mut compared = 0;
        for _ in 0..150 {
            let n = next() % 40;
            let text: String = (0..n)
                .map(|i| match next() % 9 {
                    0 | 1 => format!("l{i} hit\n"),
                    2 => format!("{} hit\n", "é".repeat(MAX_LINE_CHARS + 5)),
                    _ => format!("l{i}\n"),
                })
                .collect();
            for (context, offset, limit) in
                [(0, 0, 2000), (1, 0, 3), (2, 3, 5), (5, 1, 1), (3, 0, 7)]
            {
                let options = grep_options(context, offset, limit);
                let source = Source::new(text.as_bytes());
                let memory = super::super::render(&source, None, &options);
                assert_eq!(
                    streamed(&text, &options, usize::MAX),
                    memory,
                    "{text:?} {context} {offset} {limit}"
                );
                compared += 1;
            }
            // Separate leading and trailing context, and a stop after N matching lines.
            for (before, after, max_count, limit) in [
                (Some(5), None, Some(1), 2000),
                (None, Some(2), Some(2), 2000),
                (Some(1), Some(3), Some(3), 4),
                (Some(0), Some(0), Some(1), 2000),
                (Some(2), Some(1), None, 5),
            ] {
                let options = ViewOptions {
                    before_context: before,
                    after_context: after,
                    max_count,
                    ..grep_options(4, 0, limit)
                };
                let source = Source::new(text.as_bytes());
                let memory = super::super::render(&source, None, &options);
                assert_eq!(
                    streamed(&text, &options, usize::MAX),
                    memory,
                    "{text:?} {before:?} {after:?} {max_count:?} {limit}"
                );
                compared += 1;
            }
        }
        assert_eq!(compared, 1500);
    }

    #[test]
    fn invalid_utf8_in_a_searched_line_is_reported() {
        let d = ViewOptions::default();
        let options = grep_options(d.context_lines, d.offset, d.limit);
        for (bytes, replaced) in [(&b"ok hit"[..], false), (b"bad \xff hit", true)] {
            let mut grep = StreamedGrep::new(&options, usize::MAX);
            grep.line(StreamedLine {
                index: 0,
                start: 0,
                len: bytes.len() as u64,
                chars: bytes.len() as u64,
                bytes,
            });
            assert_eq!(grep.replaced_invalid_utf8(), replaced);
        }
    }

    #[test]
    fn a_page_ends_at_its_byte_budget_and_says_where_to_continue() {
        let text: String = (1..=100).map(|i| format!("hit {i:04}\n")).collect();
        let d = ViewOptions::default();
        let options = grep_options(d.context_lines, d.offset, d.limit);
        let v = streamed(&text, &options, 25);
        assert!(v.truncated);
        // 8 bytes a line: the fourth passes 25 bytes, the fifth waits for the next page.
        assert_eq!(v.next_offset, Some(4));
        assert!(
            v.content
                .ends_with("\n4:hit 0004\n[more after line 4 of 100: offset=4]\n"),
            "{}",
            v.content
        );
    }

    #[test]
    fn a_line_searched_in_its_prefix_only_is_said() {
        // A line that goes on past what was kept may match after it: "no line matched"
        // alone would be a false answer.
        let d = ViewOptions::default();
        let options = grep_options(d.context_lines, d.offset, d.limit);
        let mut grep = StreamedGrep::new(&options, 16);
        let text = b"0123456789abcdef";
        for index in 0..3 {
            grep.line(StreamedLine {
                index,
                start: index * 1000,
                len: if index == 0 { 16 } else { 1000 },
                chars: 16,
                bytes: text,
            });
        }
        assert!(grep.partly_searched());
        let v = grep.finish(3);
        assert_eq!(
            v.content,
            "[No line matched content_pattern \"hit\".]\n[2 line(s) longer than the size cap searched in their first 16 bytes only, the first at line 2; to search them whole, ask the user to restart the server with a larger --max-file-bytes.]\n"
        );
        // A line kept whole is searched whole: nothing to say.
        let mut grep = StreamedGrep::new(&options, 16);
        grep.line(StreamedLine {
            index: 0,
            start: 0,
            len: 16,
            chars: 16,
            bytes: text,
        });
        assert!(!grep.partly_searched());
    }
}
