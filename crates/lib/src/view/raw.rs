//! Raw mode (docs/views.md#raw-view): `limit` lines from 0-based line `offset`, as they are;
//! also the line windows of files read in windows ([`render_window`]). A line over
//! [`super::MAX_LINE_CHARS`] characters is cut with a marker naming the byte range of its
//! rest, and listed in `cut_lines`.

use super::lines::{join, number_width, shown_line, Line};
use super::{CutLine, Mode, View, ViewOptions};
use crate::guard::LineWindow;
use crate::hint::Hint;
use crate::source::Source;

pub(crate) fn render(source: &Source, options: &ViewOptions) -> View {
    let total = source.line_count();
    let mut view = View::empty(Mode::Raw);
    if total == 0 {
        return view;
    }
    if options.offset >= total {
        view.content = format!(
            "[Offset {} is past end of file ({total} lines).]\n",
            options.offset
        );
        return view;
    }
    let end = options.offset.saturating_add(options.limit).min(total);
    let bytes = source.bytes();
    // Walked, not indexed: the start of every line of the file is never kept.
    let mut lines: Vec<Line> = Vec::with_capacity(end - options.offset);
    for (i, (start, stop)) in (options.offset..end).zip(source.line_spans_from(options.offset)) {
        let (text, rest) = shown_line(
            &bytes[start..stop],
            start as u64,
            (stop - start) as u64,
            None,
            options.hints,
        );
        push_line(&mut lines, &mut view, options, i as u64 + 1, text, rest);
    }
    if end < total {
        view.truncated = true;
        view.next_offset = Some(end);
        lines.push(Line::Note(format!(
            "[Showing lines {}-{end} of {total}. Use {} to read more.]",
            options.offset + 1,
            options.hints.render(&Hint::Offset(end))
        )));
    }
    view.content = join(&lines, number_width(total));
    view
}

/// How a window read in windows continues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paging {
    /// The default strategy on a file over the size cap: `offset`/`limit` as in the raw view.
    Offset,
    /// Strategy `lineRange`, which asked for lines up to `end_line` (1-based, inclusive;
    /// `None`: to the end of the file).
    LineRange { end_line: Option<u64> },
}

/// The raw view of a [`LineWindow`] the guard read from a file of any size.
pub fn render_window(window: &LineWindow, options: &ViewOptions, paging: Paging) -> View {
    let total = window.total_lines;
    let mut view = View::empty(Mode::Raw);
    if total == 0 {
        return view;
    }
    if window.returned == 0 {
        // Only the default strategy gets here (lineRange refuses such a start first).
        view.content = format!(
            "[Offset {} is past end of file ({total} lines).]\n",
            window.first_line.saturating_sub(1)
        );
        return view;
    }
    let width = number_width(usize::try_from(total).unwrap_or(usize::MAX));
    let mut lines: Vec<Line> = Vec::new();
    let mut long = window.long_lines.iter().peekable();
    let mut at = 0usize;
    for k in 0..window.returned {
        let end = memchr::memchr(b'\n', &window.text[at..]).map_or(window.text.len(), |n| at + n);
        let kept = &window.text[at..end];
        at = (end + 1).min(window.text.len());
        let (text, rest) = match long.next_if(|l| l.index == k) {
            Some(l) => shown_line(kept, l.start, l.len, Some(l.chars), options.hints),
            // A short line: whole, its place not needed.
            None => (String::from_utf8_lossy(kept).into_owned(), None),
        };
        push_line(
            &mut lines,
            &mut view,
            options,
            window.first_line + k,
            text,
            rest,
        );
    }
    let first = window.first_line;
    let last = first + window.returned - 1;
    let wanted_last = match paging {
        Paging::Offset => total,
        Paging::LineRange { end_line } => end_line.unwrap_or(total).min(total),
    };
    if last < wanted_last {
        view.truncated = true;
        let why = if window.stopped_by_cap {
            " (the size cap stops a window)"
        } else {
            ""
        };
        let next = match paging {
            Paging::Offset => {
                view.next_offset = usize::try_from(last).ok();
                let offset = usize::try_from(last).unwrap_or(usize::MAX);
                format!(
                    "Use {} to read more.",
                    options.hints.render(&Hint::Offset(offset))
                )
            }
            Paging::LineRange { .. } => format!(
                "Use {} to read more.",
                options.hints.render(&Hint::LineRange { start: last + 1 })
            ),
        };
        lines.push(Line::Note(format!(
            "[Showing lines {first}-{last} of {total}{why}. {next}]"
        )));
    }
    view.content = join(&lines, width);
    view
}

/// Adds a source line (numbered when asked), noting its cut.
fn push_line(
    lines: &mut Vec<Line>,
    view: &mut View,
    options: &ViewOptions,
    number: u64,
    text: String,
    rest: Option<(u64, u64)>,
) {
    if let Some((start, end)) = rest {
        view.truncated = true;
        view.cut_lines.push(CutLine {
            line: number,
            start,
            end,
        });
    }
    lines.push(Line::Shown {
        number: options
            .line_numbers
            .then(|| usize::try_from(number).unwrap_or(usize::MAX)),
        sep: ':',
        text,
    });
}
