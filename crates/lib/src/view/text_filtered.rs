//! Text-filtered mode (docs/views.md#text-filtered-view): grep with context, in the convention of `grep -n -C`:
//! matching lines `N:text`, context lines `N-text` (numbers unpadded), blocks separated by `--`.

use super::lines::{join, number_width, shown_line, Line};
use super::{CutLine, Mode, View, ViewOptions};
use crate::source::Source;

pub(crate) fn render(source: &Source, options: &ViewOptions) -> View {
    let mut grep = Grep {
        source,
        options,
        patterns: [&options.content_pattern, &options.name_pattern]
            .into_iter()
            .flatten()
            .collect(),
        view: View::empty(Mode::TextFiltered),
        lines: Vec::new(),
        shown: 0,
        last_printed: None,
        matched_lines: 0,
    };
    let total = source.line_count();
    let mut matches = 0usize;
    let mut i = options.offset;
    while i < total && !grep.view.truncated {
        if grep.at_max_count() {
            grep.view.stopped_at_max_count = options.max_count;
            break;
        }
        // Polled once per 4096 lines: a relaxed load, nothing next to a regex search.
        if i.is_multiple_of(4096) && options.cancel.is_cancelled() {
            break;
        }
        if !grep.is_match(i) {
            i += 1;
            continue;
        }
        matches += 1;
        let (to, last_match) = grep.block_end(i);
        grep.push_block(i, to, last_match);
        i = to + 1;
    }
    grep.footer(matches);
    let mut view = grep.view;
    // The match blocks shown: 0 tells a script "no match" (the CLI's exit status 1).
    view.expanded_forms = matches;
    view.content = join(&grep.lines, number_width(total));
    view
}

/// The grep being rendered: the lines so far and where printing stopped.
struct Grep<'s, 'o> {
    source: &'s Source<'s>,
    options: &'o ViewOptions,
    patterns: Vec<&'o crate::pattern::Pattern>,
    view: View,
    lines: Vec<Line>,
    /// Source lines shown (notes and separators not counted).
    shown: usize,
    last_printed: Option<usize>,
    /// Matching lines counted so far (against `max_count`).
    matched_lines: usize,
}

impl Grep<'_, '_> {
    fn is_match(&self, i: usize) -> bool {
        let line = self.source.line(i);
        self.patterns.iter().any(|p| p.is_match(&line))
    }

    /// Whether `max_count` matching lines were found: the grep stops (as `grep -m`).
    fn at_max_count(&self) -> bool {
        self.options
            .max_count
            .is_some_and(|m| self.matched_lines >= m)
    }

    /// The last line of the block around the match at `i`, and its last line counted as
    /// a match: extended while matches keep coming within the trailing context, until
    /// `max_count` matching lines are counted (the lines after are context).
    fn block_end(&mut self, i: usize) -> (usize, usize) {
        let last = self.source.line_count() - 1;
        let context = self.options.after();
        self.matched_lines += 1;
        let mut last_match = i;
        let mut to = i.saturating_add(context).min(last);
        let mut j = i + 1;
        while j <= to && !self.at_max_count() {
            if self.is_match(j) {
                self.matched_lines += 1;
                last_match = j;
                to = j.saturating_add(context).min(last);
            }
            j += 1;
        }
        (to, last_match)
    }

    /// Prints the block of the match at `i` up to `to`, with its leading context, until
    /// the page is full. The match is on the page when any line is: leading context that
    /// does not fit with it is left out, the lines nearest the match kept.
    fn push_block(&mut self, i: usize, to: usize, last_match: usize) {
        let from = block_start(
            i,
            self.options,
            self.last_printed,
            self.options.limit - self.shown,
        );
        let separated = self.last_printed.is_some_and(|p| from > p + 1);
        for k in from..=to {
            if self.shown == self.options.limit {
                self.view.truncated = true;
                self.view.next_offset = Some(k);
                return;
            }
            if k == from && separated {
                self.lines.push(Line::Plain("--".into()));
            }
            let sep = if k == i || (k > i && k <= last_match && self.is_match(k)) {
                ':'
            } else {
                '-'
            };
            self.push_line(k, sep);
        }
    }

    fn push_line(&mut self, k: usize, sep: char) {
        let (start, end) = self.source.line_span(k);
        let (text, rest) = shown_line(
            &self.source.bytes()[start..end],
            start as u64,
            (end - start) as u64,
            None,
            self.options.hints,
        );
        if let Some((start, end)) = rest {
            self.view.cut_lines.push(CutLine {
                line: k as u64 + 1,
                start,
                end,
            });
        }
        self.lines.push(Line::Grep {
            number: k + 1,
            sep,
            text,
        });
        self.shown += 1;
        self.last_printed = Some(k);
    }

    /// How to continue a cut page, or that nothing matched.
    fn footer(&mut self, matches: usize) {
        let total = self.source.line_count();
        footer(&mut self.lines, &self.view, matches, total, self.options);
    }
}

/// The first line shown of the block of the match at line `i`: its leading context,
/// from `offset` on and after the last line printed, at most as many lines before the
/// match as the `room` left on the page allows (with no room: where the next page starts).
pub(super) fn block_start(
    i: usize,
    options: &ViewOptions,
    last_printed: Option<usize>,
    room: usize,
) -> usize {
    let from = i.saturating_sub(options.before()).max(options.offset);
    let from = last_printed.map_or(from, |p| from.max(p + 1));
    if room == 0 {
        return from;
    }
    from.max((i + 1).saturating_sub(room))
}

/// The note that ends a grep: how to continue a cut page, or that nothing matched (the
/// in-memory grep and the streamed one of files over the size cap end alike).
pub(super) fn footer(
    lines: &mut Vec<Line>,
    view: &View,
    matches: usize,
    total: usize,
    options: &ViewOptions,
) {
    if view.truncated {
        let next = view.next_offset.unwrap_or(total);
        // Short: a cut page of a log pays it on every call (docs/views.md).
        lines.push(Line::Note(format!(
            "[more after line {next} of {total}: {}]",
            options.hints.render(&crate::hint::Hint::Offset(next))
        )));
    } else if matches == 0 {
        let names: Vec<String> = [
            ("content_pattern", &options.content_pattern),
            ("name_pattern", &options.name_pattern),
        ]
        .into_iter()
        .filter_map(|(k, p)| {
            p.as_ref().map(|p| {
                let k = options.hints.render(&crate::hint::Hint::Parameter(k));
                format!("{k} {}", p.quoted())
            })
        })
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
}
