//! Raw mode (docs/views.md#raw-view): `limit` lines from 0-based line `offset`, as they are.

use super::lines::{join, number_width, Line};
use super::{Mode, View, ViewOptions};
use crate::source::Source;

pub(crate) fn render(source: &Source, options: &ViewOptions) -> View {
    let total = source.line_count();
    let mut view = View {
        mode: Mode::Raw,
        content: String::new(),
        total_forms: 0,
        expanded_forms: 0,
        truncated: false,
        next_offset: None,
    };
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
    // Walked, not indexed: the start of every line of the file is never kept.
    let mut lines: Vec<Line> = (options.offset..end)
        .zip(source.lines_from(options.offset))
        .map(|(i, text)| {
            let text = text.into_owned();
            if options.line_numbers {
                Line::numbered(i + 1, text)
            } else {
                Line::Plain(text)
            }
        })
        .collect();
    if end < total {
        view.truncated = true;
        view.next_offset = Some(end);
        lines.push(Line::Note(format!(
            "[Showing lines {}-{end} of {total}. Use offset={end} to read more.]",
            options.offset + 1
        )));
    }
    view.content = join(&lines, number_width(total));
    view
}
