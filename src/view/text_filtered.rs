//! Text-filtered mode (docs/views.md#text-filtered-view): grep with context, in the convention of `grep -n -C`:
//! matching lines `N: text`, context lines `N- text`, blocks separated by `--`.

use super::lines::{join, number_width, shown_line, Line};
use super::{CutLine, Mode, View, ViewOptions};
use crate::source::Source;

pub(crate) fn render(source: &Source, options: &ViewOptions) -> View {
    let total = source.line_count();
    let patterns: Vec<_> = [&options.content_pattern, &options.name_pattern]
        .into_iter()
        .flatten()
        .collect();
    let is_match = |i: usize| {
        let line = source.line(i);
        patterns.iter().any(|p| p.is_match(&line))
    };
    let mut view = View {
        mode: Mode::TextFiltered,
        content: String::new(),
        total_forms: 0,
        expanded_forms: 0,
        truncated: false,
        next_offset: None,
        cut_lines: Vec::new(),
    };
    let mut lines: Vec<Line> = Vec::new();
    let mut shown = 0usize;
    let mut matches = 0usize;
    // The block being built: lines [block_start, block_end) with the last match in it.
    let mut i = options.offset;
    let mut last_printed: Option<usize> = None;
    while i < total {
        // Polled once per 4096 lines: a relaxed load, nothing next to a regex search.
        if i.is_multiple_of(4096) && options.cancel.is_cancelled() {
            break;
        }
        if !is_match(i) {
            i += 1;
            continue;
        }
        matches += 1;
        let from = i.saturating_sub(options.context_lines).max(options.offset);
        let from = last_printed.map_or(from, |p| from.max(p + 1));
        let separated = last_printed.is_some_and(|p| from > p + 1);
        // Extend the block while matches keep coming within the context window.
        let mut to = i.saturating_add(options.context_lines).min(total - 1);
        let mut j = i + 1;
        while j <= to {
            if is_match(j) {
                to = j.saturating_add(options.context_lines).min(total - 1);
            }
            j += 1;
        }
        for k in from..=to {
            if shown == options.limit {
                view.truncated = true;
                view.next_offset = Some(k);
                break;
            }
            if k == from && separated {
                lines.push(Line::Plain("--".into()));
            }
            let (start, end) = source.line_span(k);
            let (text, rest) = shown_line(
                &source.bytes()[start..end],
                start as u64,
                (end - start) as u64,
                None,
            );
            if let Some((start, end)) = rest {
                view.cut_lines.push(CutLine {
                    line: k as u64 + 1,
                    start,
                    end,
                });
            }
            let sep = if k == i || (k > i && is_match(k)) {
                ':'
            } else {
                '-'
            };
            lines.push(Line::Shown {
                number: Some(k + 1),
                sep,
                text,
            });
            shown += 1;
            last_printed = Some(k);
        }
        if view.truncated {
            break;
        }
        i = to + 1;
    }
    if view.truncated {
        let next = view.next_offset.unwrap_or(total);
        lines.push(Line::Note(format!(
            "[Showing matches before line {} of {total}. Use offset={next} to continue.]",
            next + 1
        )));
    } else if matches == 0 {
        let names: Vec<String> = [
            ("content_pattern", &options.content_pattern),
            ("name_pattern", &options.name_pattern),
        ]
        .into_iter()
        .filter_map(|(k, p)| p.as_ref().map(|p| format!("{k} {}", p.quoted())))
        .collect();
        let from = if options.offset > 0 {
            format!(" from line {}", options.offset.saturating_add(1))
        } else {
            String::new()
        };
        lines.push(Line::Note(format!(
            "[No line matched {}{from}.]",
            names.join(" or ")
        )));
    }
    view.content = join(&lines, number_width(total));
    view
}
